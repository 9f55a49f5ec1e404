#!/bin/bash
# Device benchmark: before (oldrepo: the code before the extension-API work) and after (this
# tree), same scenarios, server on CPU 0 and wrk on CPU 1, fresh process per run.
# Usage: bash .kit/run.sh RUNS DURATION WARMUP OUTDIR
set -e
RUNS=${1:-5}; DUR=${2:-2}; WARM=${3:-1}; OUTDIR=${4:-/tmp/out}
REPO=$(pwd); K=/tmp/k; mkdir -p $K $OUTDIR
[ -x $K/bin/node ] || tar xJf .kit/kit.tar.xz -C $K
[ -d /tmp/oldrepo ] || tar xJf .kit/old.tar.xz -C /tmp
printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/lib exec %s/bin/wrk.real "$@"\n' $K $K > $K/bin/wrk; chmod +x $K/bin/wrk
export PATH=$K/bin:$PATH
# The new tree: root node_modules, bench node_modules, the built server.
setup() { # repo dist
  local R=$1
  # Copies, not links: Node resolves a package's own imports from its real path.
  rm -rf $R/node_modules $R/bench/node_modules
  cp -a $K/root_nm $R/node_modules; cp -a $K/bench_nm $R/bench/node_modules
  mkdir -p $R/node_modules/@tachyon $R/bench/node_modules/@tachyon
  ln -sfn $R/packages/server $R/node_modules/@tachyon/server
  ln -sfn $R/packages/server $R/bench/node_modules/@tachyon/server
  mkdir -p $R/bench/loadgen/target/release; cp $K/bin/loadgen $R/bench/loadgen/target/release/loadgen; touch $R/bench/loadgen/target/release/loadgen
}
[ -d packages/server/dist ] || tar xJf .kit/new_dist.tar.xz -C packages/server
setup $REPO; setup /tmp/oldrepo
node -v; nproc; lscpu | grep 'Model name'; ldd --version | head -1
MW=${MWPEERS:-tachyon-cors,tachyon-secure-headers,tachyon-rate-limit,tachyon-metrics,tachyon-access-log}
for round in $(seq 1 ${ROUNDS:-2}); do
  for v in old new; do
    if [ $v = old ]; then cd /tmp/oldrepo; P=uws,tachyon,$MW; else cd $REPO; P=uws,tachyon,tachyon-hooks,$MW; fi
    node bench/run.mjs --only http-realistic-get --peers $P --runs $RUNS --duration $DUR --warmup $WARM --no-write-results 2>&1 | tee $OUTDIR/$v-realistic-$round.txt | grep -v '^bench: run' || true
    [ "$OTHER" = none ] || node bench/run.mjs --only ${OTHER:-http-static-4k} --peers uws,tachyon --runs $RUNS --duration $DUR --warmup $WARM --no-write-results 2>&1 | tee $OUTDIR/$v-other-$round.txt | grep -v '^bench: run' || true
  done
done
