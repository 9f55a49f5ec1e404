export type { Bus, BusDelivery, BusHost, BusMessage } from './bus.ts';
export { InProcessBus, isInProcess } from './in-process.ts';
