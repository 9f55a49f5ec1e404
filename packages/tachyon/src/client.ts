// `tachyon/client`: the realtime client, re-exported so one dependency gives both sides.
export * from '@tachyon/client';
