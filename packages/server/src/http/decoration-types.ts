// The decoration interfaces, apart from decorations.ts (which imports Request and Response)
// so that request.ts and response.ts can merge them without an import cycle.

/**
 * Fields and methods added to every request by `decorateRequest` (docs/plugins.md). Augment it
 * to type them: `declare module '@tachyon/server' { interface RequestDecorations { user: User | null } }`.
 */
export interface RequestDecorations {}

/** Fields and methods added to every response by `decorateReply`; augmented like RequestDecorations. */
export interface ReplyDecorations {}

/** Values added to the app (and the scopes below it) by `decorate`; augmented like RequestDecorations. */
export interface AppDecorations {}
