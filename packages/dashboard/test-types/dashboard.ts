// dashboard(): options and the view the page receives, as a consumer sees them.
import { App } from '@tachyon/server';
import { dashboard, type DISCONNECT_CODE, type DashboardOptions, type DashboardView, type RouteView } from '@tachyon/dashboard';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

const app = new App();
await app.register(dashboard());
await app.register(dashboard({ path: '/ops', auth: (req) => req.header('authorization') === 'Bearer x', actions: true, interval: 500 }));
await app.register(dashboard({ auth: async (req) => req.cookies.session === 'ok' }));
// @ts-expect-error auth answers a boolean
dashboard({ auth: () => 'yes' });
// @ts-expect-error actions is a boolean
dashboard({ actions: 1 });
// @ts-expect-error no such option
dashboard({ colour: 'red' });

const options: DashboardOptions = { path: '/_tachyon' };
void options;
expectType<Equal<typeof DISCONNECT_CODE, 1008>>(true);
declare const view: DashboardView;
expectType<Equal<typeof view.routes, RouteView[]>>(true);
expectType<Equal<(typeof view.topics)[number]['presence'], number | null>>(true);
expectType<Equal<(typeof view.workerStats)[number]['eld'], { p50: number; p99: number; max: number }>>(true);
