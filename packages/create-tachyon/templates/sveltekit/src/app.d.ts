// event.platform in load, actions and endpoints: publish, send, sendTo, request, presence, pressure, … (docs/sveltekit.md).
// A named import, not `extends import(…)`: an interface cannot extend an import type, and the
// error would be hidden (skipLibCheck skips .d.ts files) leaving App.Platform empty.
import type { Platform as TachyonPlatform } from '@tachyon/sveltekit';

declare global {
  namespace App {
    interface Platform extends TachyonPlatform {}
  }
}
