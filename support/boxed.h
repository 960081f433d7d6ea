// Boxed<T>: a value that costs one pointer until it is set. Copies copy the value (a deep copy).
// Reading (`->`, `*`) never allocates: an unset box reads as a shared default T. Writing goes
// through Edit(), which allocates the value the first time. For the rarely set parts of types held
// by the million (a history's entries), where an inline member would cost its size in every one.
#pragma once

#include <memory>
#include <utility>

namespace lousho {

template <class T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(const Boxed& other) : p_(other.p_ ? std::make_unique<T>(*other.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) p_ = other.p_ ? std::make_unique<T>(*other.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  ~Boxed() = default;

  // Whether a value was set (Set, or written through Edit).
  bool has_value() const { return p_ != nullptr; }
  const T& operator*() const { return p_ ? *p_ : Default(); }
  const T* operator->() const { return p_ ? p_.get() : &Default(); }
  T& Edit() {
    if (!p_) p_ = std::make_unique<T>();
    return *p_;
  }
  void Set(T value) { p_ = std::make_unique<T>(std::move(value)); }
  void Reset() { p_.reset(); }

 private:
  static const T& Default() {
    static const T kDefault{};
    return kDefault;
  }

  std::unique_ptr<T> p_;
};

}  // namespace lousho
