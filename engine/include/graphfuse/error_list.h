// Several errors found in one pass over an input (every broken rule of a rule file), thrown
// as one: code that wants the first catches graphfuse::Error as usual; `graphfuse check`
// prints them all.
#pragma once

#include <vector>

#include "graphfuse/error.h"

namespace graphfuse {

/// The first error, with the rest in `all()` (the first included), in file order.
class ErrorList : public Error {
 public:
  explicit ErrorList(std::vector<Error> all) : Error(all.front()), all_(std::move(all)) {}
  const std::vector<Error>& all() const { return all_; }

 private:
  std::vector<Error> all_;
};

/// Every error an exception carries: the list of an ErrorList, else the error itself.
inline std::vector<Error> all_errors(const Error& e) {
  if (const auto* list = dynamic_cast<const ErrorList*>(&e)) return list->all();
  return {e};
}

}  // namespace graphfuse
