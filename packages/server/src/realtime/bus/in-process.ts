// The default bus: one process, so there is nobody else to tell. The hub recognises it and
// skips the bus entirely (no interest tracking, no extra call per publish).
import type { Bus, BusDelivery, BusMessage } from './bus.ts';

export class InProcessBus implements Bus {
  start(_deliver: BusDelivery): void {}
  publish(_topic: string, _message: BusMessage, _isBinary: boolean): void {}
  interest(_topic: string, _interested: boolean): void {}
  close(): void {}
}

export function isInProcess(bus: Bus): boolean {
  return bus instanceof InProcessBus;
}
