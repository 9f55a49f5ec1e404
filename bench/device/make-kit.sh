set -e
K=/tmp/kitsrc; rm -rf $K; mkdir -p $K/root_nm $K/bench_nm $K/bin $K/lib $K/old
cp node_modules/node/bin/node $K/bin/node
# uWS: only the Linux x64 binary for Node 24 (ABI 137) and its JS
mkuws() { mkdir -p $1/uWebSockets.js; cp node_modules/uWebSockets.js/{ESM_wrapper.mjs,index.d.ts,package.json,uws.js,uws_linux_x64_137.node} $1/uWebSockets.js/; }
mkuws $K/root_nm
for p in busboy streamsearch prom-client @opentelemetry/api tdigest bintrees @standard-schema/spec zod; do mkdir -p $K/root_nm/$(dirname $p); cp -a node_modules/$p $K/root_nm/$p; done
# bench's own node_modules without the other runtimes and the full uWS package
( cd bench/node_modules && tar cf - --exclude=./bun --exclude=./deno --exclude=./@deno --exclude=./uWebSockets.js --exclude=./.bin --exclude=./@oven . ) | ( cd $K/bench_nm && tar xf - )
mkuws $K/bench_nm
cp -a packages/server/dist $K/new_dist
cp -a ${OLD:?OLD=worktree of the old commit, built}/packages/server/dist $K/old_dist
cp /usr/bin/wrk $K/bin/wrk.real
cp /lib/x86_64-linux-gnu/libluajit-5.1.so.2 $K/lib/
cp bench/loadgen/target/release/loadgen $K/bin/loadgen
du -sh $K; mkdir -p .kit; rm -f .kit/kit.tar.xz
tar cf - -C $K . | xz -T2 -6 > .kit/kit.tar.xz
ls -la .kit
