#include "sparse24.hpp"

#include <string>

namespace ceiling::numerics {

uint8_t encode_pair(int first, int second) {
  if (first < 0 || second > 3 || first >= second)
    throw std::invalid_argument("2:4 metadata: positions " + std::to_string(first) + ", " + std::to_string(second) +
                                " are not an ordered pair of distinct positions 0..3");
  return static_cast<uint8_t>(first | (second << 2));
}

int nibble_first(uint8_t n) { return n & 3; }
int nibble_second(uint8_t n) { return (n >> 2) & 3; }
bool valid_nibble(uint8_t n) { return n < 16 && nibble_first(n) < nibble_second(n); }

std::vector<uint8_t> valid_nibbles() {
  std::vector<uint8_t> v;
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) v.push_back(encode_pair(a, b));
  return v;
}

Compressed24 compress_24(const std::vector<double>& row) {
  if (row.size() % 4) throw std::invalid_argument("2:4 sparsity: a row of " + std::to_string(row.size()) + " elements is not whole chunks of 4");
  Compressed24 c;
  for (size_t chunk = 0; chunk < row.size() / 4; ++chunk) {
    int pos[2], n = 0;
    for (int i = 0; i < 4; ++i)
      if (row[4 * chunk + i] != 0) {
        if (n == 2)
          throw std::invalid_argument("2:4 sparsity: chunk " + std::to_string(chunk) + " holds more than 2 non-zeros");
        pos[n++] = i;
      }
    // Fill up with the lowest positions not taken (their values are zero).
    for (int i = 0; n < 2 && i < 4; ++i)
      if (!(n >= 1 && pos[0] == i)) pos[n++] = i;
    if (pos[0] > pos[1]) std::swap(pos[0], pos[1]);
    c.values.push_back(row[4 * chunk + pos[0]]);
    c.values.push_back(row[4 * chunk + pos[1]]);
    c.nibbles.push_back(encode_pair(pos[0], pos[1]));
  }
  return c;
}

std::vector<double> expand_24(const Compressed24& c) {
  if (c.values.size() != 2 * c.nibbles.size()) throw std::invalid_argument("2:4 sparsity: two values per nibble expected");
  std::vector<double> row(4 * c.nibbles.size(), 0.0);
  for (size_t chunk = 0; chunk < c.nibbles.size(); ++chunk) {
    const uint8_t n = c.nibbles[chunk];
    if (!valid_nibble(n)) throw std::invalid_argument("2:4 sparsity: invalid metadata nibble " + std::to_string(n));
    row[4 * chunk + nibble_first(n)] = c.values[2 * chunk];
    row[4 * chunk + nibble_second(n)] = c.values[2 * chunk + 1];
  }
  return row;
}

std::vector<uint8_t> valid_nibbles_32bit() { return {encode_pair(0, 1), encode_pair(2, 3)}; }

std::vector<double> expand_12(const std::vector<double>& values, const std::vector<uint8_t>& nibbles) {
  if (values.size() != nibbles.size()) throw std::invalid_argument("1:2 sparsity: one value per nibble expected");
  std::vector<double> row(2 * values.size(), 0.0);
  for (size_t chunk = 0; chunk < values.size(); ++chunk) {
    const uint8_t n = nibbles[chunk];
    if (n != encode_pair(0, 1) && n != encode_pair(2, 3))
      throw std::invalid_argument("1:2 sparsity (32-bit elements): invalid metadata nibble " + std::to_string(n) +
                                  " (only 0b0100 and 0b1110 name a whole 32-bit element)");
    row[2 * chunk + nibble_first(n) / 2] = values[chunk];
  }
  return row;
}

uint32_t pack_nibbles(const std::vector<uint8_t>& nibbles, size_t first) {
  uint32_t w = 0;
  for (size_t i = 0; i < 8 && first + i < nibbles.size(); ++i) w |= static_cast<uint32_t>(nibbles[first + i] & 15) << (4 * i);
  return w;
}

uint32_t uniform_metadata(uint8_t nibble) {
  uint32_t w = 0;
  for (int i = 0; i < 8; ++i) w |= static_cast<uint32_t>(nibble & 15) << (4 * i);
  return w;
}

}  // namespace ceiling::numerics
