"""Only packaging.version.parse, which ONNX Runtime's float16.py imports (Debian's python3 here
may lack python3-packaging); used by bench/transformers/ort_optimizer_peer.py."""
