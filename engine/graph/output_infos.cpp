// OutputInfos: a node's output list that stores only a count until an output gets a name
// or a type.
#include <algorithm>
#include <stdexcept>

#include "graphfuse/graph.h"

namespace graphfuse {

namespace {
const OutputInfo& default_info() {
  static const OutputInfo kDefault;
  return kDefault;
}
}  // namespace

OutputInfos::OutputInfos(std::initializer_list<OutputInfo> items) : OutputInfos(std::vector<OutputInfo>(items)) {}

OutputInfos::OutputInfos(const std::vector<OutputInfo>& items) : count_(static_cast<std::uint32_t>(items.size())) {
  if (std::all_of(items.begin(), items.end(), [](const OutputInfo& o) { return o == default_info(); })) return;
  items_ = new OutputInfo[count_];
  std::copy(items.begin(), items.end(), items_);
}

OutputInfos::OutputInfos(const OutputInfos& o) : count_(o.count_) {
  if (!o.items_) return;
  items_ = new OutputInfo[count_];
  std::copy(o.items_, o.items_ + count_, items_);
}

OutputInfos& OutputInfos::operator=(const OutputInfos& o) {
  if (this != &o) *this = OutputInfos(o);
  return *this;
}

OutputInfos::OutputInfos(OutputInfos&& o) noexcept : items_(o.items_), count_(o.count_) {
  o.count_ = 0;
  o.items_ = nullptr;
}

OutputInfos& OutputInfos::operator=(OutputInfos&& o) noexcept {
  if (this != &o) {
    delete[] items_;
    count_ = o.count_;
    items_ = o.items_;
    o.count_ = 0;
    o.items_ = nullptr;
  }
  return *this;
}

OutputInfos::~OutputInfos() { delete[] items_; }

const OutputInfo& OutputInfos::operator[](std::size_t k) const { return items_ ? items_[k] : default_info(); }

OutputInfo& OutputInfos::operator[](std::size_t k) {
  materialize_();
  return items_[k];
}

const OutputInfo& OutputInfos::at(std::size_t k) const {
  if (k >= count_) throw std::out_of_range("OutputInfos::at");
  return (*this)[k];
}

OutputInfo& OutputInfos::at(std::size_t k) {
  if (k >= count_) throw std::out_of_range("OutputInfos::at");
  return (*this)[k];
}

OutputInfos::iterator OutputInfos::begin() {
  materialize_();
  return items_;
}

void OutputInfos::materialize_() {
  if (items_ || count_ == 0) return;
  items_ = new OutputInfo[count_];
}

void OutputInfos::resize(std::size_t count) {
  if (!items_) {
    count_ = static_cast<std::uint32_t>(count);
    return;
  }
  auto* grown = new OutputInfo[count];
  std::move(items_, items_ + std::min<std::size_t>(count, count_), grown);
  delete[] items_;
  items_ = grown;
  count_ = static_cast<std::uint32_t>(count);
}

void OutputInfos::push_back(OutputInfo info) {
  bool plain = info == default_info();
  if (plain && !items_) {
    ++count_;
    return;
  }
  materialize_();
  resize(count_ + 1);
  if (!items_) materialize_();  // was empty: resize kept the count only
  items_[count_ - 1] = std::move(info);
}

void OutputInfos::clear() {
  delete[] items_;
  items_ = nullptr;
  count_ = 0;
}

bool operator==(const OutputInfos& a, const OutputInfos& b) {
  if (a.count_ != b.count_) return false;
  if (!a.items_ && !b.items_) return true;
  return std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace graphfuse
