// coremark_like: the three CoreMark workload shapes, written from scratch: linked-list
// traversal/reversal/sort over a node pool, a 16-bit integer matrix multiply, and a
// character-class state machine over a text buffer, folded through a CRC-16. Measures
// pointer chasing, small-integer arithmetic and switch-driven control flow together.
#include "bench.h"

// ---- list ----
enum { kNodes = 2000 };
typedef struct Node {
  struct Node* next;
  int16_t key;
  int16_t data;
} Node;
static Node g_pool[kNodes];

static Node* list_reverse(Node* head) {
  Node* prev = NULL;
  while (head) {
    Node* next = head->next;
    head->next = prev;
    prev = head;
    head = next;
  }
  return prev;
}

// Bottom-up merge sort of a singly linked list by key (stable).
static Node* list_sort(Node* head) {
  for (int width = 1;; width *= 2) {
    Node* p = head;
    Node* tail = NULL;
    head = NULL;
    int merges = 0;
    while (p) {
      ++merges;
      Node* q = p;
      int psize = 0;
      for (int i = 0; i < width && q; ++i) { ++psize; q = q->next; }
      int qsize = width;
      while (psize > 0 || (qsize > 0 && q)) {
        Node* e;
        if (psize == 0) { e = q; q = q->next; --qsize; }
        else if (qsize == 0 || !q) { e = p; p = p->next; --psize; }
        else if (p->key <= q->key) { e = p; p = p->next; --psize; }
        else { e = q; q = q->next; --qsize; }
        if (tail) tail->next = e; else head = e;
        tail = e;
      }
      p = q;
    }
    if (tail) tail->next = NULL;
    if (merges <= 1) return head;
  }
}

static uint32_t list_work(uint64_t* seed) {
  for (int i = 0; i < kNodes; ++i) {
    g_pool[i].next = i + 1 < kNodes ? &g_pool[i + 1] : NULL;
    g_pool[i].key = (int16_t)(bench_rand(seed) & 0x7FFF);
    g_pool[i].data = (int16_t)i;
  }
  Node* head = &g_pool[0];
  uint32_t acc = 0;
  for (int r = 0; r < 4; ++r) {
    head = list_reverse(head);
    head = list_sort(head);
    int pos = 0;
    for (Node* p = head; p; p = p->next, ++pos)
      if ((p->data & 63) == r) acc += (uint32_t)(pos * p->key);
    for (Node* p = head; p; p = p->next) p->key = (int16_t)((p->key * 7 + p->data) & 0x7FFF);
  }
  return acc;
}

// ---- matrix ----
enum { kDim = 48 };
static int16_t g_ma[kDim][kDim], g_mb[kDim][kDim];
static int32_t g_mc[kDim][kDim];

static uint32_t matrix_work(uint64_t* seed) {
  for (int i = 0; i < kDim; ++i)
    for (int j = 0; j < kDim; ++j) {
      g_ma[i][j] = (int16_t)(bench_rand(seed) & 0xFFF) - 0x800;
      g_mb[i][j] = (int16_t)(bench_rand(seed) & 0xFFF) - 0x800;
    }
  for (int i = 0; i < kDim; ++i)
    for (int j = 0; j < kDim; ++j) {
      int32_t s = 0;
      for (int k = 0; k < kDim; ++k) s += (int32_t)g_ma[i][k] * g_mb[k][j];
      g_mc[i][j] = s;
    }
  uint32_t acc = 0;
  for (int i = 0; i < kDim; ++i)
    for (int j = 0; j < kDim; ++j) acc += (uint32_t)(g_mc[i][j] >> 3) & 0x7FF;
  return acc;
}

// ---- state machine ----
enum State { kStart, kInt, kFrac, kExp, kExpSign, kExpInt, kInvalid, kStates };
static uint8_t g_text[8192];

static uint32_t state_work(uint64_t* seed) {
  static const char kAlphabet[] = "0123456789..,,eE+-x ";
  for (unsigned i = 0; i < sizeof(g_text); ++i)
    g_text[i] = (uint8_t)kAlphabet[bench_rand(seed) % (sizeof(kAlphabet) - 1)];
  uint32_t counts[kStates] = {0};
  enum State s = kStart;
  for (unsigned i = 0; i < sizeof(g_text); ++i) {
    uint8_t c = g_text[i];
    int digit = c >= '0' && c <= '9';
    if (c == ',' || c == ' ') {
      counts[s]++;
      s = kStart;
      continue;
    }
    switch (s) {
      case kStart: s = digit ? kInt : (c == '.' ? kFrac : kInvalid); break;
      case kInt: s = digit ? kInt : c == '.' ? kFrac : (c == 'e' || c == 'E') ? kExp : kInvalid; break;
      case kFrac: s = digit ? kFrac : (c == 'e' || c == 'E') ? kExp : kInvalid; break;
      case kExp: s = digit ? kExpInt : (c == '+' || c == '-') ? kExpSign : kInvalid; break;
      case kExpSign: s = digit ? kExpInt : kInvalid; break;
      case kExpInt: s = digit ? kExpInt : kInvalid; break;
      default: break;
    }
  }
  uint32_t acc = 0;
  for (int i = 0; i < kStates; ++i) acc = acc * 31 + counts[i];
  return acc;
}

static uint16_t crc16(uint16_t crc, uint32_t v) {
  for (int i = 0; i < 32; ++i) {
    uint16_t bit = (uint16_t)((crc ^ (v >> i)) & 1);
    crc >>= 1;
    if (bit) crc ^= 0xA001;
  }
  return crc;
}

static uint64_t bench_run(int n) {
  uint64_t seed = 0xC03E;
  uint64_t h = 0;
  uint16_t crc = 0;
  for (int it = 0; it < n; ++it) {
    crc = crc16(crc, list_work(&seed));
    crc = crc16(crc, matrix_work(&seed));
    crc = crc16(crc, state_work(&seed));
    h = bench_mix(h, crc);
  }
  return h;
}

BENCH_MAIN(1700)
