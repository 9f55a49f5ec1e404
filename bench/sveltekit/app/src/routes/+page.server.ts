// A small SSR page: a server load and a component, no I/O (measures the adapter, not the app).
export const load = () => ({ title: 'Hello', items: ['one', 'two', 'three'] });
