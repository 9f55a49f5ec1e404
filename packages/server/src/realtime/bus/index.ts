export type { Bus, BusDelivery, BusMessage } from './bus.ts';
export { InProcessBus, isInProcess } from './in-process.ts';
