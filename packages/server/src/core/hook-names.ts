// The names of the hooks only the App takes (its lifecycle, the WebSocket hooks, the publish
// hooks), listed once. The modules that type and run them (app/hooks.ts, realtime/ws-hooks.ts,
// realtime/publish-hooks.ts) build their sets from these lists, checked against their types;
// a scope (routing/scope.ts, which may not import those) names them when it refuses one.
export const APP_LIFECYCLE_HOOKS = ['onReady', 'onBeforeListen', 'onListen', 'onClose'] as const;
export const WS_HOOKS = ['onUpgrade', 'onUpgradeEnd', 'onOpen', 'onEvent', 'aroundEvent', 'onSocketClose'] as const;
export const PUBLISH_HOOKS = ['onPublish', 'onDeliver'] as const;

/** Every hook name `app.addHook` takes and a scope's `addHook` refuses. */
export const APP_LEVEL_HOOK_NAMES: ReadonlySet<string> = new Set<string>([...APP_LIFECYCLE_HOOKS, ...WS_HOOKS, ...PUBLISH_HOOKS]);
