// The history's id index: an entry id to the entry's position, in one open-addressing table of
// positions (4 bytes a slot, kept at most half full) instead of a hash map node per entry. The ids
// themselves stay in the entries: every lookup reads them through `id_of(position)`.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace lousho::agent {

class IdIndex {
 public:
  static constexpr size_t kNone = static_cast<size_t>(-1);

  size_t size() const { return size_; }
  // Makes room for n ids without growing.
  template <typename IdOf>
  void Reserve(size_t n, const IdOf& id_of) {
    if (n * 2 > slots_.size()) Rehash(SlotsFor(n), id_of);
  }
  // The position of `id`; kNone when it is not there.
  template <typename IdOf>
  size_t Find(std::string_view id, const IdOf& id_of) const {
    if (slots_.empty()) return kNone;
    for (size_t s = Home(id);; s = (s + 1) & (slots_.size() - 1)) {
      if (slots_[s] == kEmpty) return kNone;
      if (id_of(slots_[s]) == id) return slots_[s];
    }
  }
  // Adds `id` at `pos` (its entry must hold it already); false when it is there already.
  template <typename IdOf>
  bool Insert(std::string_view id, size_t pos, const IdOf& id_of) {
    if (Find(id, id_of) != kNone) return false;
    if ((size_ + 1) * 2 > slots_.size()) Rehash(SlotsFor(size_ + 1), id_of);
    Place(id, static_cast<uint32_t>(pos));
    ++size_;
    return true;
  }
  void Clear() {
    std::vector<uint32_t>().swap(slots_);
    size_ = 0;
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  static size_t SlotsFor(size_t n) {
    size_t slots = 16;
    while (slots < n * 2) slots *= 2;
    return slots;
  }
  size_t Home(std::string_view id) const {
    return std::hash<std::string_view>{}(id) & (slots_.size() - 1);
  }
  void Place(std::string_view id, uint32_t pos) {
    size_t s = Home(id);
    while (slots_[s] != kEmpty) s = (s + 1) & (slots_.size() - 1);
    slots_[s] = pos;
  }
  template <typename IdOf>
  void Rehash(size_t slots, const IdOf& id_of) {
    std::vector<uint32_t> old(slots, kEmpty);
    old.swap(slots_);
    for (uint32_t pos : old)
      if (pos != kEmpty) Place(id_of(pos), pos);
  }

  std::vector<uint32_t> slots_;  // positions; kEmpty: a free slot
  size_t size_ = 0;
};

}  // namespace lousho::agent
