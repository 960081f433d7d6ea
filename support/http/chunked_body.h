// HTTP/1.1 chunked transfer coding, decoded as the bytes arrive, so that a broken body is
// reported as what it is: malformed framing, or a connection that closed in the middle.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lousho::agent {

// Built into the HTTP module (which hands it the raw body) and the core (tests). Not
// thread-safe: one per response.
class ChunkedDecoder {
 public:
  // Longest chunk size line (extensions included) and trailer section taken.
  static constexpr size_t kMaxLineBytes = 4096;
  static constexpr size_t kMaxTrailerBytes = size_t{64} * 1024;

  // Appends the data `bytes` carries to *out. False when the framing is malformed (error()
  // then says how); bytes after the last chunk's trailer are ignored. With `ends`, the size of
  // *out where each chunk's data ended is added to it, so that a reader can hand the data on
  // chunk by chunk, as the server sent it.
  bool Feed(std::string_view bytes, std::string* out, std::vector<size_t>* ends = nullptr);
  // The last chunk and its trailer have been read: the body is whole.
  bool done() const { return state_ == State::kDone; }
  bool failed() const { return state_ == State::kFailed; }
  // What was malformed, e.g. "the chunk size line 'zz' is not hexadecimal".
  const std::string& error() const { return error_; }
  // Where a body that ends now (the connection closed) was cut, e.g. "inside a chunk, 10 of
  // its 16 bytes read"; empty when done.
  std::string WhereCut() const;

 private:
  enum class State { kSize, kData, kDataEnd, kTrailer, kDone, kFailed };
  bool Fail(std::string why);
  bool SizeLine(std::string_view line);
  // One step of Feed in each state, from bytes[*pos]; false once the framing failed.
  bool SizeStep(std::string_view bytes, size_t* pos);
  void DataStep(std::string_view bytes, size_t* pos, std::string* out, std::vector<size_t>* ends);
  bool DataEndStep(std::string_view bytes, size_t* pos);
  bool TrailerStep(std::string_view bytes, size_t* pos);
  // Takes bytes into line_ until a line feed; true when line_ holds a whole line (without its
  // CRLF or LF). `max` bounds it.
  bool TakeLine(std::string_view bytes, size_t* pos, size_t max, bool* too_long);

  State state_ = State::kSize;
  std::string line_;
  uint64_t chunk_size_ = 0;
  uint64_t left_ = 0;         // of the current chunk's data
  bool data_end_cr_ = false;  // the CR after a chunk's data was seen
  size_t trailer_bytes_ = 0;
  uint64_t chunks_ = 0;
  std::string error_;
};

}  // namespace lousho::agent
