// 2:4 structured sparsity as mma.sp reads it (issue 13): in every chunk of 4 consecutive elements
// of a row of A at most 2 are non-zero; the compressed row holds 2 values per chunk and a 4-bit
// metadata nibble per chunk names their positions (bits 1:0 the first, 3:2 the second; with
// ::ordered_metadata the first is the lower). 0b0000, 0b0101, 0b1010 and 0b1111 name one position
// twice and are invalid (PTX ISA, "Sparse matrix storage").
#pragma once
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace ceiling::numerics {

struct Compressed24 {
  std::vector<double> values;    // K/2: two per chunk, in position order
  std::vector<uint8_t> nibbles;  // K/4
};

uint8_t encode_pair(int first, int second);  // 0 <= first < second <= 3; throws otherwise
bool valid_nibble(uint8_t nibble);            // an ordered pair of distinct positions
int nibble_first(uint8_t nibble);
int nibble_second(uint8_t nibble);
// The six valid nibbles, in the order (0,1) (0,2) (0,3) (1,2) (1,3) (2,3).
std::vector<uint8_t> valid_nibbles();

// A row whose chunks hold at most 2 non-zeros (K a multiple of 4); a chunk with fewer names the
// lowest free positions for its zeros. Throws std::invalid_argument for a chunk with 3 or 4.
Compressed24 compress_24(const std::vector<double>& row);
// The K-wide row back from its compressed form.
std::vector<double> expand_24(const Compressed24& c);
// 32-bit elements (tf32): mma.sp reads 1:2 sparsity as 2:4 over 16-bit halves. A chunk is 2
// elements, one non-zero, and its nibble names both halves of that one: 0b0100 (element 0) or
// 0b1110 (element 1), the only valid values (PTX ISA, "Sparse mma.sp with .tf32 type").
std::vector<uint8_t> valid_nibbles_32bit();  // {0b0100, 0b1110}
// The 2 x values.size()-wide row back from one value per chunk and its nibble.
std::vector<double> expand_12(const std::vector<double>& values, const std::vector<uint8_t>& nibbles);
// One 32-bit metadata word of eight nibbles (chunk i in bits 4i+3..4i).
uint32_t pack_nibbles(const std::vector<uint8_t>& nibbles, size_t first = 0);
// Every nibble of the word the same (what the timing loops use: the thread layout of the metadata
// then does not matter).
uint32_t uniform_metadata(uint8_t nibble);

}  // namespace ceiling::numerics
