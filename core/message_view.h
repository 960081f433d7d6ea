// A read-only sequence of messages that costs nothing to copy: a model request's conversation.
#pragma once

#include <array>
#include <cstddef>
#include <iterator>
#include <memory>
#include <span>
#include <vector>

#include "core/content.h"

namespace lousho::agent {

// A random-access iterator over anything with `const T& operator[](size_t) const` and size().
template <typename Range, typename T>
class IndexIterator {
 public:
  using iterator_category = std::random_access_iterator_tag;
  using value_type = T;
  using difference_type = std::ptrdiff_t;
  using pointer = const T*;
  using reference = const T&;

  IndexIterator() = default;
  IndexIterator(const Range* range, size_t i) : range_(range), i_(i) {}
  reference operator*() const { return (*range_)[i_]; }
  pointer operator->() const { return &(*range_)[i_]; }
  reference operator[](difference_type n) const { return (*range_)[Shift(n)]; }
  IndexIterator& operator++() { return *this += 1; }
  IndexIterator operator++(int) {
    IndexIterator old = *this;
    *this += 1;
    return old;
  }
  IndexIterator& operator--() { return *this -= 1; }
  IndexIterator operator--(int) {
    IndexIterator old = *this;
    *this -= 1;
    return old;
  }
  IndexIterator& operator+=(difference_type n) {
    i_ = Shift(n);
    return *this;
  }
  IndexIterator& operator-=(difference_type n) { return *this += -n; }
  friend IndexIterator operator+(IndexIterator it, difference_type n) { return it += n; }
  friend IndexIterator operator+(difference_type n, IndexIterator it) { return it += n; }
  friend IndexIterator operator-(IndexIterator it, difference_type n) { return it -= n; }
  friend difference_type operator-(const IndexIterator& a, const IndexIterator& b) {
    return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
  }
  friend bool operator==(const IndexIterator& a, const IndexIterator& b) { return a.i_ == b.i_; }
  friend auto operator<=>(const IndexIterator& a, const IndexIterator& b) { return a.i_ <=> b.i_; }

 private:
  size_t Shift(difference_type n) const {
    return static_cast<size_t>(static_cast<difference_type>(i_) + n);
  }
  const Range* range_ = nullptr;
  size_t i_ = 0;
};

// Pointers to messages in blocks of fixed size that never move: a table that only grows at its
// end. A block, once full, is never written again; a table, once shared, is never changed but in
// the slots past what any reader was given (see MessageView). History keeps its branch in one.
class MessageTable {
 public:
  static constexpr size_t kBlockBits = 10;
  static constexpr size_t kBlockSize = size_t{1} << kBlockBits;
  using Block = std::array<const Message*, kBlockSize>;

  const Message& at(size_t i) const { return *(*blocks_[i >> kBlockBits])[i & (kBlockSize - 1)]; }
  size_t capacity() const { return blocks_.size() * kBlockSize; }

  // Sets slot `i` (< capacity()).
  void Set(size_t i, const Message* m) { (*blocks_[i >> kBlockBits])[i & (kBlockSize - 1)] = m; }
  // An empty table with room for `capacity` messages.
  static std::shared_ptr<MessageTable> Make(size_t capacity) {
    auto t = std::make_shared<MessageTable>();
    const size_t blocks = (capacity + kBlockSize - 1) / kBlockSize;
    t->blocks_.reserve(blocks);
    for (size_t i = 0; i < blocks; ++i) t->blocks_.push_back(std::make_shared<Block>());
    return t;
  }
  // A new table with the same blocks and one more (the blocks are shared, not copied).
  std::shared_ptr<MessageTable> Grown() const {
    auto t = std::make_shared<MessageTable>();
    t->blocks_.reserve(blocks_.size() + 1);
    t->blocks_ = blocks_;
    t->blocks_.push_back(std::make_shared<Block>());
    return t;
  }

 private:
  std::vector<std::shared_ptr<Block>> blocks_;
};

// The messages of a conversation, read-only, in order. Either over contiguous messages (a vector
// or span: not owned, they must outlive the view, as with a span), or over the first `size`
// slots of a MessageTable it shares: a snapshot of a history's branch that later appends and
// branch moves leave unchanged (the messages themselves live as long as the history). Copying a
// view copies two pointers and a count.
class MessageView {
 public:
  using iterator = IndexIterator<MessageView, Message>;
  using const_iterator = iterator;
  using value_type = Message;

  MessageView() = default;
  MessageView(std::span<const Message> messages)  // NOLINT(google-explicit-constructor)
      : data_(messages.data()), size_(messages.size()) {}
  MessageView(const std::vector<Message>& messages)  // NOLINT(google-explicit-constructor)
      : MessageView(std::span<const Message>(messages)) {}
  MessageView(std::shared_ptr<const MessageTable> table, size_t size)
      : table_(std::move(table)), size_(size) {}

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Message& operator[](size_t i) const { return table_ ? table_->at(i) : data_[i]; }
  const Message& front() const { return (*this)[0]; }
  const Message& back() const { return (*this)[size_ - 1]; }
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, size_}; }
  std::reverse_iterator<iterator> rbegin() const { return std::reverse_iterator<iterator>(end()); }
  std::reverse_iterator<iterator> rend() const { return std::reverse_iterator<iterator>(begin()); }
  // A copy of the messages (tests, callers that keep them).
  std::vector<Message> ToVector() const { return std::vector<Message>(begin(), end()); }

 private:
  const Message* data_ = nullptr;
  std::shared_ptr<const MessageTable> table_;
  size_t size_ = 0;
};

}  // namespace lousho::agent
