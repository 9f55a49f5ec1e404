// The decoration interfaces, apart from decorations.ts (which imports Request and Response)
// so that request.ts and response.ts can merge them without an import cycle.

/**
 * Fields and methods added to every request by `decorateRequest` (docs/plugins.md). Augment it
 * to type them: `declare module '@tachyon/server' { interface RequestDecorations { user: User | null } }`.
 */
// biome-ignore lint/suspicious/noEmptyInterface: empty on purpose, users fill it by module augmentation
export interface RequestDecorations {}

/** Fields and methods added to every response by `decorateReply`; augmented like RequestDecorations. */
// biome-ignore lint/suspicious/noEmptyInterface: empty on purpose, users fill it by module augmentation
export interface ReplyDecorations {}

/** Values added to the app (and the scopes below it) by `decorate`; augmented like RequestDecorations. */
// biome-ignore lint/suspicious/noEmptyInterface: empty on purpose, users fill it by module augmentation
export interface AppDecorations {}
