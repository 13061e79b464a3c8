// The reference-kernel folder the CLI and the Python module hand to graphfuse::rewrite_and_fold.
#include "graphfuse/kernels/fold.h"

namespace graphfuse::kernels {

std::unique_ptr<Folder> make_folder(std::string_view scope) {
  FoldOptions o;
  o.scope = fold_scope_from_name(scope);
  if (o.scope == FoldScope::Off) return nullptr;
  return std::make_unique<ReferenceFolder>(o);
}

}  // namespace graphfuse::kernels
