// Placeholder until ONNX import/export lands (replaced by onnx_import.cpp / onnx_export.cpp).
#include "graphfuse/io.h"

namespace graphfuse {
Graph load_onnx(const std::string& path) { throw Error(SourceLoc{path}, "ONNX import is not built yet"); }
void save_onnx(const Graph&, const std::string& path) { throw Error(SourceLoc{path}, "ONNX export is not built yet"); }
}  // namespace graphfuse
