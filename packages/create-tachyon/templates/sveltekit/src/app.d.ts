// event.platform in load, actions and endpoints: { publish, subscribers, app } (docs: @tachyon/sveltekit).
declare global {
  namespace App {
    interface Platform extends import('@tachyon/sveltekit').Platform {}
  }
}
export {};
