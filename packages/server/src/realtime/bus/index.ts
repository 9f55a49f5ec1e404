export type { Bus, BusDelivery, BusHost, BusMessage, BusMeta } from './bus.ts';
export { InProcessBus, isInProcess } from './in-process.ts';
