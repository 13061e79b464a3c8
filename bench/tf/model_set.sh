# Sourced by bench/tf/models.sh and latency.sh: the TF.js graph models under a MODELS folder
# (bench/tf/get_models.sh) and what TF.js needs to run each.

# Inputs TF.js cannot make up from the signature: rvm's recurrent state has unknown rank
# (zero scalars start a clip) and its downsample ratio must be positive.
judge_options() {
  case $1 in
    rvm) echo "--shape src=1,144,256,3 --shape downsample_ratio= --fill downsample_ratio=0.5
               --shape r1i= --shape r2i= --shape r3i= --shape r4i= --fill r1i=0 --fill r2i=0 --fill r3i=0 --fill r4i=0" ;;
  esac
}
# TF.js's wasm backend refuses facemesh-attention as it is (BatchMatMul on a non-float32
# tensor): its cpu backend runs it.
backend() { case $1 in facemesh-attention) echo cpu ;; *) echo wasm ;; esac; }

# for_each_model MODELS OUT FUNCTION: calls FUNCTION NAME MODEL_JSON DIR for each model
# (MODEL_FILTER=regex limits them), DIR a fresh OUT/NAME.
for_each_model() {
  local models=$1 out=$2 fn=$3 m name d
  for m in "$models"/nsfw_mobilenet_v2_mid/model.json "$models"/hm/package/models/*.json; do
    name=$(basename "$(dirname "$m")"); [ "$name" = models ] && name=$(basename "$m" .json)
    [[ -n "${MODEL_FILTER:-}" && ! "$name" =~ $MODEL_FILTER ]] && continue
    d=$out/$name; rm -rf "$d"; mkdir -p "$d"
    "$fn" "$name" "$m" "$d"
  done
}
