export {
  BrokerBus,
  type BrokerBusStats,
  type BrokerLink,
  type BrokerTransport,
} from './broker-bus.ts';
export { brokerBusOptions, type BrokerBusOptions } from './options.ts';
export { checkFrame, encodeFrame, FrameKind, HEADER_BYTES } from './frame.ts';
