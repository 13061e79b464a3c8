#include "rewrite/apply_listener.h"

#include "graph/storage.h"

namespace graphfuse::rewrite {

void ApplyListener::node_created(NodeId n) {
  cx_->grow();  // the marks and positions reach the new node
  saw(records::op(cx_->g, n));
  cx_->marks.mark(n, round_, kChanged);
  created.push_back(n);
  cx_->work->created(n, touched);
}

void ApplyListener::node_replaced(NodeId n, bool constant) {
  saw(records::op(cx_->g, n));
  // A match reading n as a leaf was decided on the facts of a constant that may be gone.
  changed_node(n, constant ? Mark(kChanged | kConstChanged) : kChanged);
}

void ApplyListener::changed_node(NodeId n, Mark m) {
  cx_->marks.mark(n, round_, m);
  changed.push_back(n);
  cx_->work->touch(n, touched);
}

void ApplyListener::uses_changed(NodeId n) {
  cx_->marks.mark(n, round_, kUsesChanged);
  cx_->work->touch(n, touched);
}

void ApplyListener::output_moved(NodeId n) {
  // Legality must see the new output, and matches decided before (one that would move a
  // second output name onto this value) wait for the next round.
  cx_->marks.is_output()[n] = 1;
  cx_->marks.mark(n, round_, Mark(kChanged | kConstChanged));
  cx_->work->touch(n, touched);
}

}  // namespace graphfuse::rewrite
