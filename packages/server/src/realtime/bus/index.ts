export type { Bus, BusDelivery, BusHost, BusMessage, BusMeta, BusAsk, BusAnswer } from './bus.ts';
export { InProcessBus, isInProcess } from './in-process.ts';
