// preinstall: one line when npm runs on a Node older than the packages need (see .npmrc).
// The script itself may run on the pinned Node 24 (node_modules/.bin comes first in a
// script's PATH once installed): npm's own Node is the one in its user agent.
const npmNode = /\bnode\/v(\d+)[.\d]*/.exec(process.env.npm_config_user_agent ?? '') ?? [
  `node/${process.version}`,
  process.versions.node.split('.')[0],
];
if (Number(npmNode[1]) < 22) {
  console.log(
    `tachyon: npm runs on Node ${npmNode[0].slice(5)}, older than the packages need (>= 22); this repository's scripts use the pinned Node 24 (devDependency "node"), so installing here is fine.`,
  );
}
