export {
  BrokerBus,
  brokerBusOptions,
  type BrokerBusOptions,
  type BrokerBusStats,
  type BrokerLink,
  type BrokerTransport,
} from './broker-bus.ts';
export { checkFrame, encodeFrame, FrameKind, HEADER_BYTES } from './frame.ts';
