// The whole game server as one Tachyon App (the pages will be mounted on it too).
import { App, jsonLogger, type AppOptions, type Server } from '@tachyon/server';
import { registerGame, type GameRoutes, type GameRoutesOptions } from './register.ts';

export interface GameAppOptions extends GameRoutesOptions {
  /** Signs the guest cookie. Required in production; a fixed development value otherwise. */
  cookieSecret?: string;
  /**
   * The game's opt-in protocol (README, "Compact protocol"): room events held for at most this
   * many milliseconds and sent as one frame per room (`coalescePublishes: { tick }`), and each
   * binary keystroke answered at once with a binary acknowledgement (`binaryAcks`). Unset:
   * every publish goes out at once. Binary keystrokes are accepted either way.
   */
  publishTick?: number;
  app?: Omit<AppOptions, 'cookieSecret'>;
}

/** `app` is typed with the game's routes, topics and ws route (`GameAppType`): the typed clients read it. */
export interface GameApp extends GameRoutes {
  /** Listens on `port` (0: any); the returned server's close() also stops the game clock. */
  listen(port: number, host?: string): Promise<Server>;
}

export function createGameApp(options: GameAppOptions = {}): GameApp {
  const app = new App({
    logger: jsonLogger('info'),
    ...(options.publishTick === undefined ? {} : { coalescePublishes: { tick: options.publishTick } }),
    ...options.app,
    cookieSecret: options.cookieSecret ?? 'typing-race-dev-secret',
  });
  const routes = registerGame(app, { binaryAcks: options.publishTick !== undefined, ...options });
  return {
    ...routes,
    async listen(port, host) {
      const server = await app.listen(port, host);
      const close = server.close.bind(server);
      server.close = (...args: Parameters<Server['close']>) => {
        routes.stop();
        return close(...args);
      };
      return server;
    },
  };
}
