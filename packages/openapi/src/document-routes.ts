// The routes that serve documents and the reference page, per app: no document lists them
// (they are not the API). openapi.serve() and asyncapi.serve() know theirs when they declare
// them; a handler passed to app.get() learns its own at its first request.
export class DocumentRoutes {
  /** `METHOD /path` keys, as generateOpenApi() skips them. */
  readonly keys = new Set<string>();
  /** Grows with every new route: a document made at an older version is made again. */
  version = 0;

  add(method: string, path: string): void {
    const key = `${method} ${path}`;
    if (this.keys.has(key)) return;
    this.keys.add(key);
    this.version++;
  }

  /** The route of a request served by a document handler (HEAD and any() included). */
  learn(route: string): void {
    for (const method of ['GET', 'HEAD', 'ANY']) this.add(method, route);
  }
}

const byApp = new WeakMap<object, DocumentRoutes>();

export function documentRoutes(app: object): DocumentRoutes {
  let routes = byApp.get(app);
  if (routes === undefined) byApp.set(app, (routes = new DocumentRoutes()));
  return routes;
}
