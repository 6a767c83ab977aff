/*
 * ragmeter._native: optional accelerator for the hot path (TREC parsing, string encoding,
 * per-query ordering + dedupe, the (query, doc) join, and for the coverage measures the P* and
 * ideal alpha-DCG greedies, the answerable questions, corpus id look-ups and token counts).
 *
 * Only the CPython C API; arrays come and go through the buffer protocol (numpy arrays,
 * Arrow buffers, bytes) and bytearrays. Every function has a pure numpy/pyarrow twin in
 * ragmeter.core / ragmeter.io that gives identical results; the parsers return None for any
 * input they do not handle exactly like the Python reader (comments are handled; CR, tabs
 * mixed with odd whitespace, non-ASCII bytes, unusual numbers, wrong field counts are not),
 * and the caller then takes the Python path, which produces the warnings and precise errors.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#define RAGMETER_SSE2 1
#include <emmintrin.h>
#else
#define RAGMETER_SSE2 0
#endif
/* for the few helpers of the per-line loops that the compiler would otherwise call (a call a
   line is a tenth of a line's work) */
#if defined(__GNUC__) || defined(__clang__)
#define HOT static inline __attribute__((always_inline))
#else
#define HOT static inline
#endif
/* The per-line loops compiled twice, for any x86-64 and for x86-64-v3 (AVX2 and BMI1/2:
   shifts by a register without the count in cl, the lowest bit cleared or counted in one
   instruction: 8 % fewer instructions a line in scan_block, 5 % less time), the one the
   processor runs picked once when the module loads (GCC's target_clones, a glibc ifunc). The
   same C, the same results either way: the cloned functions hold no floating-point product
   that a fused multiply-add could round differently. */
#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && defined(__GNUC__) && \
    !defined(__clang__) && __GNUC__ >= 11
#define CLONED __attribute__((target_clones("default", "arch=x86-64-v3")))
#else
#define CLONED
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#endif

/* ---------------------------------------------------------------- growable buffers */

typedef struct {
    char *p;
    size_t len, cap;
    /* bytes from p whose pages are ready (ahead of len: see vec_ahead); cap when not asked */
    size_t ready;
    size_t ahead; /* 0, or how far ahead of len pages are made ready */
} vec;

static int vec_grow(vec *v, size_t extra);

/* Room for `extra` more bytes: the test inline (parsers call it for every line), the growth
   out of line. */
HOT int vec_reserve(vec *v, size_t extra) {
    return v->len + extra <= v->ready ? 0 : vec_grow(v, extra);
}

/*
 * Make the pages of base[from:to) present and writable in one call (Linux's
 * MADV_POPULATE_WRITE, 5.14 on; their bytes unchanged) rather than one page fault at each
 * first write: on a virtual machine a fault costs ≈ 3.5 µs a page, the call about half
 * (200 MB: 0.19 → 0.10 s). Whole pages only; a no-op where the call is not known.
 */
static void ready_pages(char *base, size_t from, size_t to) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    static int works = 1;
    static long page = 0;
    if (!works) return;
    if (!page) page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return;
    uintptr_t a = (uintptr_t)(base + from) & ~((uintptr_t)page - 1);
    uintptr_t b = (uintptr_t)(base + to) & ~((uintptr_t)page - 1);
    if (b > a && madvise((void *)a, b - a, MADV_POPULATE_WRITE) != 0 &&
        (errno == EINVAL || errno == ENOSYS))
        works = 0; /* an older kernel: faults as before */
#else
    (void)base; (void)from; (void)to;
#endif
}

/* Ask that `v`'s pages be made ready `ahead` bytes beyond what is written, a stretch at a
   time, for a large output written front to back (see ready_pages). */
static void vec_ahead(vec *v, size_t ahead) {
    v->ahead = ahead;
    if (v->ready > v->len) v->ready = v->len; /* what is reserved is not ready yet */
}

static int vec_grow(vec *v, size_t extra) {
    if (v->len + extra > v->cap) {
        size_t cap = v->cap ? v->cap : 4096;
        while (cap < v->len + extra) cap *= 2;
        char *old = v->p;
        char *p = realloc(v->p, cap);
        if (!p) return -1;
        v->p = p;
        v->cap = cap;
        if (p != old && v->ready > v->len) v->ready = v->len; /* moved: copied up to len */
    }
    if (!v->ahead) {
        v->ready = v->cap;
        return 0;
    }
    size_t to = v->len + extra + v->ahead;
    if (to > v->cap) to = v->cap;
    if (to > v->ready) ready_pages(v->p, v->ready, to);
    v->ready = to;
    return 0;
}

/*
 * OwnedBuffer: a read-only buffer-protocol object that takes ownership of a malloc'd block,
 * so parsed columns reach numpy/Arrow without the copy a bytearray would make (at 100 M
 * rows that copy doubled the peak memory of each column for a moment).
 */
typedef struct {
    PyObject_HEAD
    char *p;
    Py_ssize_t len;
} OwnedBuffer;

static void owned_dealloc(OwnedBuffer *self) {
    free(self->p);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int owned_getbuffer(OwnedBuffer *self, Py_buffer *view, int flags) {
    static char empty = 0;
    return PyBuffer_FillInfo(view, (PyObject *)self, self->p ? self->p : &empty, self->len, 1,
                             flags);
}

static Py_ssize_t owned_length(OwnedBuffer *self) { return self->len; }

static PyBufferProcs owned_as_buffer = {(getbufferproc)owned_getbuffer, NULL};
static PyMappingMethods owned_as_mapping = {(lenfunc)owned_length, NULL, NULL};

static PyTypeObject OwnedBufferType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ragmeter._native.OwnedBuffer",
    .tp_basicsize = sizeof(OwnedBuffer),
    .tp_dealloc = (destructor)owned_dealloc,
    .tp_as_buffer = &owned_as_buffer,
    .tp_as_mapping = &owned_as_mapping,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Read-only memory owned by ragmeter._native.",
};

/* Hand a vec's memory to a new OwnedBuffer (shrunk to its length); the vec is emptied. */
static PyObject *vec_to_bytearray(vec *v) {
    OwnedBuffer *out = PyObject_New(OwnedBuffer, &OwnedBufferType);
    if (!out) {
        free(v->p);
        v->p = NULL;
        v->len = v->cap = v->ready = 0;
        return NULL;
    }
    char *p = v->p;
    if (p && v->len < v->cap) {
        char *shrunk = realloc(p, v->len ? v->len : 1);
        if (shrunk) p = shrunk;
    }
    out->p = p;
    out->len = (Py_ssize_t)v->len;
    v->p = NULL;
    v->len = v->cap = v->ready = 0;
    return (PyObject *)out;
}

/* outputs of this many bytes or more have their pages made ready at once (ready_pages) */
#define READY_BYTES ((size_t)1 << 20)

/* A bytearray of `size` bytes for an output that is written whole, its data in *data. */
static PyObject *new_bytearray(Py_ssize_t size, char **data) {
    PyObject *out = PyByteArray_FromStringAndSize(NULL, size);
    if (out) {
        *data = PyByteArray_AS_STRING(out);
        if ((size_t)size >= READY_BYTES) ready_pages(*data, 0, (size_t)size);
    }
    return out;
}

/* vec_reserve for `extra` bytes that will all be written (in any order), their pages made
   ready at once. */
static int vec_reserve_whole(vec *v, size_t extra) {
    if (vec_reserve(v, extra)) return -1;
    if (extra >= READY_BYTES) ready_pages(v->p, v->len, v->len + extra);
    return 0;
}

/* ---------------------------------------------------------------- strings + hashing */

typedef struct {
    const char *data;
    const void *offsets;
    int wide; /* 1: int64 offsets, 0: int32 */
    Py_ssize_t base;  /* array offset (slice start) */
} strarr;

static inline void str_at(const strarr *s, int64_t i, const char **p, size_t *n) {
    int64_t a, b;
    if (s->wide) {
        a = ((const int64_t *)s->offsets)[s->base + i];
        b = ((const int64_t *)s->offsets)[s->base + i + 1];
    } else {
        a = ((const int32_t *)s->offsets)[s->base + i];
        b = ((const int32_t *)s->offsets)[s->base + i + 1];
    }
    *p = s->data + a;
    *n = (size_t)(b - a);
}

static inline uint64_t hash_bytes(const char *p, size_t n) {
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)n;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ULL;
    }
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 32;
    return h;
}

/* The high and low halves of a * b folded into one word (wyhash's "mum": every bit of both
   factors reaches both halves). */
static inline uint64_t fold_product(uint64_t a, uint64_t b) {
#if defined(__SIZEOF_INT128__)
    const __uint128_t m = (__uint128_t)a * b;
    return (uint64_t)m ^ (uint64_t)(m >> 64);
#else /* no 128-bit product: a 64-bit mix of the two */
    uint64_t h = (a ^ (b >> 29)) * 0xbf58476d1ce4e5b9ULL ^ b;
    h ^= h >> 31;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 32);
#endif
}

/* A hash of (p, n) a word at a time (block_align's and scan_block's tables: doc ids are mostly
   8 to 16 bytes, where a multiply per byte was most of the look-up). Up to 16 bytes are two
   words, loaded where they lie (overlapping when n < 16: the length, mixed in, tells strings
   apart) and folded with one 128-bit product; longer ids fold 16 bytes at a time first. Ids
   under 8 bytes are one word: one load where 8 bytes can be read before `end`, the bytes past
   n masked off, else gathered byte by byte (the same word: the same hash). */
HOT uint64_t hash_words_in(const char *p, size_t n, const char *end) {
    const uint64_t k1 = 0xa0761d6478bd642fULL, k2 = 0xe7037ed1a0b428dbULL;
    uint64_t seed = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n, a = 0, b = 0;
    if (n > 16) {
        const char *last = p + n - 16; /* the last 16 bytes, whatever is left before them */
        for (; p < last; p += 16) {
            memcpy(&a, p, 8);
            memcpy(&b, p + 8, 8);
            seed = fold_product(a ^ k1 ^ seed, b ^ k2);
        }
        memcpy(&a, last, 8);
        memcpy(&b, last + 8, 8);
    } else if (n >= 8) {
        memcpy(&a, p, 8);
        memcpy(&b, p + n - 8, 8);
    } else {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (n && p + 8 <= end) {
            memcpy(&a, p, 8);
            a &= ~0ULL >> (64 - 8 * n); /* the n bytes at p (little endian: the low ones) */
        } else
#endif
            for (size_t i = 0; i < n; i++) a |= (uint64_t)(unsigned char)p[i] << (8 * i);
    }
    (void)end;
    return fold_product(a ^ k1 ^ seed, b ^ k2 ^ seed);
}

static inline uint64_t hash_words(const char *p, size_t n) { return hash_words_in(p, n, p); }

/* Whether n bytes at a and b are equal: query ids are short, where a loop costs less than
   a call to memcmp. */
static inline int same_bytes(const char *a, const char *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* same_bytes for two ids in a buffer that ends at `end`: a word at a time where 8 bytes are
   readable from both, the last word's bytes past n masked off, without the byte loop's exit
   branch (the parsers' hottest line on a file of short query ids) */
static inline int same_bytes_in(const char *a, const char *b, size_t n, const char *end) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (n && end - a >= 8 && end - b >= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (n < 8) return ((x ^ y) & (~(uint64_t)0 >> (64 - 8 * n))) == 0; /* the low n */
        if (x != y) return 0;
        a += 8;
        b += 8;
        n -= 8;
    }
#else
    (void)end;
#endif
    return same_bytes(a, b, n);
}

/* byte-order comparison (memcmp, shorter first on a common prefix): Arrow's / strcmp order */
static inline int cmp_bytes(const char *a, size_t na, const char *b, size_t nb) {
    int c = memcmp(a, b, na < nb ? na : nb);
    if (c) return c;
    return (na > nb) - (na < nb);
}

/* A stable merge sort `name(v, tmp, n)` of n elements of `type` by `before(a, b)` (a goes
   first): an insertion sort at 16 elements or fewer, and no merge where the two sorted halves
   are already in order (most inputs here nearly are); tmp holds n / 2 elements. */
#define DEFINE_MERGE_SORT(name, type, before)                                                \
    static void name(type *v, type *tmp, size_t n) {                                        \
        if (n <= 16) {                                                                      \
            for (size_t i = 1; i < n; i++) {                                                \
                type x = v[i];                                                              \
                size_t j = i;                                                               \
                while (j > 0 && before(&x, &v[j - 1])) { v[j] = v[j - 1]; j--; }            \
                v[j] = x;                                                                   \
            }                                                                               \
            return;                                                                         \
        }                                                                                   \
        size_t h = n / 2;                                                                   \
        name(v, tmp, h);                                                                    \
        name(v + h, tmp, n - h);                                                            \
        if (!before(&v[h], &v[h - 1])) return;                                              \
        memcpy(tmp, v, h * sizeof(type));                                                   \
        size_t i = 0, j = h, k = 0;                                                         \
        while (i < h && j < n) v[k++] = before(&v[j], &tmp[i]) ? v[j++] : tmp[i++];         \
        while (i < h) v[k++] = tmp[i++];                                                    \
    }

/* ---------------------------------------------------------------- number parsing */

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The common form of a score, d+ or d+.d* or .d+ of at most 15 digits, in one loop: the value
   parse_float's general reading gives it (mant exact, divided once by a power of ten). 0, or
   -1 for any other form. Inline, for the parsers' loops. */
static inline int plain_decimal(const char *p, size_t n, double *out) {
    if (n > 16) return -1;
    uint64_t m = 0;
    size_t j = 0, dot = n;
    for (; j < n; j++) {
        const unsigned d = (unsigned)(unsigned char)p[j] - '0';
        if (d <= 9) m = m * 10 + d;
        else if (p[j] == '.' && dot == n) dot = j;
        else break;
    }
    const size_t nd = n - (dot < n);
    if (j != n || nd < 1 || nd > 15) return -1;
    const size_t fr = dot < n ? n - dot - 1 : 0;
    *out = fr ? (double)m / POW10[fr] : (double)m;
    return 0;
}

/* plain_decimal of a score of at most 8 bytes without a loop over its bytes, where 8 bytes can
   be read at p (before `end`): the bytes moved to the top of a word with '0's below them
   (leading zeros), the dot found and taken out (the bytes below it move up one, a '0' comes in
   at the bottom), the digits checked and converted 8 at a time (SWAR: the multiplications of
   simdjson's parse_eight_digits_unrolled). Any other form goes to plain_decimal: the same
   value either way (the same digits, the same power of ten). */
static inline int plain_decimal_at(const char *p, size_t n, const char *end, double *out) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n - 1 > 7 || p + 8 > end) return plain_decimal(p, n, out); /* n outside 1..8 */
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    const uint64_t zeros = 0x30 * ones, nibbles = 0xf0 * ones;
    uint64_t w;
    memcpy(&w, p, 8);
    const unsigned pad = 64 - 8 * (unsigned)n; /* 0 to 56 */
    w = (w << pad) | (zeros & ((1ULL << pad) - 1)); /* p[0] at byte 8 - n, the last at 7 */
    /* the first dot: the lowest zero byte of w ^ dots (exact for the lowest; a second dot
       fails the digit check below); the padding's '0's are not dots */
    const uint64_t x = w ^ (0x2e * ones);
    const uint64_t dots = (x - ones) & ~x & highs;
    unsigned fr = 0;
    if (dots) {
        if (n == 1) return plain_decimal(p, n, out); /* a dot alone: not a number */
        const unsigned j = (unsigned)__builtin_ctzll(dots) >> 3; /* the dot's byte */
        const uint64_t below = (1ULL << (8 * j)) - 1;
        w = (w & ~((below << 8) | 0xff)) | ((w & below) << 8) | 0x30;
        fr = 7 - j; /* the digits after the dot: bytes j + 1 to 7 */
    }
    if ((w & nibbles) != zeros || ((w + 0x06 * ones) & nibbles) != zeros)
        return plain_decimal(p, n, out); /* not all digits */
    uint64_t d = w - zeros;
    d = (d * 2561) >> 8;
    d = ((d & 0x00ff00ff00ff00ffULL) * 6553601) >> 16;
    const uint64_t m = ((d & 0x0000ffff0000ffffULL) * 42949672960001ULL) >> 32;
    *out = fr ? (double)m / POW10[fr] : (double)m;
    return 0;
#else
    (void)end;
    return plain_decimal(p, n, out);
#endif
}

/* Strict decimal float: [+-]? (d+ (. d*)? | . d+) ([eE] [+-]? d+)?. Returns 0 on success. */
static int parse_float(const char *p, size_t n, double *out) {
    if (plain_decimal(p, n, out) == 0) return 0;
    size_t i = 0;
    int neg = 0;
    if (n == 0 || n > 64) return -1;
    if (p[i] == '+' || p[i] == '-') { neg = p[i] == '-'; i++; }
    uint64_t mant = 0;
    int digits = 0, frac = 0, int_digits = 0, frac_digits = 0;
    while (i < n && p[i] >= '0' && p[i] <= '9') {
        if (mant || p[i] != '0') digits++;
        if (digits <= 19) mant = mant * 10 + (uint64_t)(p[i] - '0');
        else frac--; /* digit dropped: scale up */
        i++; int_digits++;
    }
    if (i < n && p[i] == '.') {
        i++;
        while (i < n && p[i] >= '0' && p[i] <= '9') {
            if (mant || p[i] != '0') digits++;
            if (digits <= 19) { mant = mant * 10 + (uint64_t)(p[i] - '0'); frac++; }
            i++; frac_digits++;
        }
    }
    if (int_digits + frac_digits == 0) return -1;
    int exp = 0;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        int eneg = 0, ed = 0;
        if (i < n && (p[i] == '+' || p[i] == '-')) { eneg = p[i] == '-'; i++; }
        while (i < n && p[i] >= '0' && p[i] <= '9') {
            if (exp < 100000) exp = exp * 10 + (p[i] - '0');
            i++; ed++;
        }
        if (!ed) return -1;
        if (eneg) exp = -exp;
    }
    if (i != n) return -1;
    int e10 = exp - frac;
    double v;
    if (digits <= 15 && mant < (1ULL << 53) && e10 >= -22 && e10 <= 22) {
        v = (double)mant; /* exact */
        v = e10 < 0 ? v / POW10[-e10] : v * POW10[e10];  /* one correctly rounded op */
    } else {
        char buf[80];
        memcpy(buf, p, n);
        buf[n] = 0;
        char *end = NULL;
        v = PyOS_string_to_double(buf, &end, NULL);
        if (v == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return -1; }
        if (end != buf + n) return -1;
        *out = v;
        return isfinite(v) ? 0 : -1;
    }
    *out = neg ? -v : v;
    return isfinite(*out) ? 0 : -1;
}

/* Strict integer [+-]? d+ within [-(2^31-1), 2^31-1]. */
static int parse_grade(const char *p, size_t n, int64_t *out) {
    size_t i = 0;
    int neg = 0;
    if (n == 0 || n > 18) return -1;
    if (p[i] == '+' || p[i] == '-') { neg = p[i] == '-'; i++; }
    if (i == n) return -1;
    int64_t v = 0;
    for (; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return -1;
        v = v * 10 + (p[i] - '0');
    }
    if (v > 2147483647LL) return -1;
    *out = neg ? -v : v;
    return 0;
}

/* ---------------------------------------------------------------- TREC parsing */

/* byte classes: 0 field char, 1 blank (space, \t, \v, \f), 2 newline, 3 unsupported (declined:
   \r, which the line-by-line path reads with a warning, control bytes, non-ASCII) */
static unsigned char CLS[256];

static void init_classes(void) {
    for (int c = 0; c < 256; c++) CLS[c] = (c > 0x20 && c < 0x7f) ? 0 : 3;
    CLS[' '] = 1;
    CLS['\t'] = 1;
    CLS['\v'] = 1; /* C isspace: trec_eval splits fields on \v and \f too */
    CLS['\f'] = 1;
    CLS['\n'] = 2;
}


/*
 * The end of the field starting at s[i]: the first byte at or after i that is not a field
 * byte (CLS 0: printable ASCII but space), or len. With SSE2 (every x86-64), 16 bytes at a
 * time: one branch per field instead of one per byte, whose mispredictions at each field's
 * end cost most of the parse.
 */
static inline size_t field_end(const char *s, size_t i, size_t len) {
#if RAGMETER_SSE2
    const __m128i low = _mm_set1_epi8(0x21), del = _mm_set1_epi8(0x7f);
    while (i + 16 <= len) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        /* signed: below 0x21 is a control byte, space, or a byte >= 0x80 (negative) */
        __m128i stop = _mm_or_si128(_mm_cmplt_epi8(v, low), _mm_cmpeq_epi8(v, del));
        unsigned mask = (unsigned)_mm_movemask_epi8(stop);
        if (mask) return i + (size_t)__builtin_ctz(mask);
        i += 16;
    }
#endif
    while (i < len && CLS[(unsigned char)s[i]] == 0) i++;
    return i;
}


#if RAGMETER_SSE2
/* Bit j of each mask says what byte p[j] is (j < 64): a newline; a byte of class 3 (control
   and non-ASCII bytes but blanks and newline: the parsers decline a text holding one); not a
   field byte (CLS other than 0: blanks, newline, class 3). */
static inline void line_masks(const char *p, uint64_t *nl, uint64_t *bad, uint64_t *nonfield) {
    const __m128i low = _mm_set1_epi8(0x21), del = _mm_set1_epi8(0x7f);
    const __m128i newline = _mm_set1_epi8('\n'), space = _mm_set1_epi8(' ');
    /* \t \n \v \f (9 to 12) moved to -128 to -125: below -124 as signed bytes */
    const __m128i to_low = _mm_set1_epi8((char)(0x80 - '\t')), ws_end = _mm_set1_epi8(-124);
    uint64_t n = 0, b = 0, f = 0;
    for (int c = 0; c < 4; c++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * c));
        __m128i ws = _mm_or_si128(_mm_cmpeq_epi8(v, space),
                                  _mm_cmplt_epi8(_mm_add_epi8(v, to_low), ws_end));
        __m128i nf = _mm_or_si128(_mm_cmplt_epi8(v, low), _mm_cmpeq_epi8(v, del));
        n |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, newline)) << (16 * c);
        b |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_andnot_si128(ws, nf)) << (16 * c);
        f |= (uint64_t)(unsigned)_mm_movemask_epi8(nf) << (16 * c);
    }
    *nl = n;
    *bad = b;
    *nonfield = f;
}
#endif

/*
 * A reader of the lines of a TREC text, one line's fields at a time: the fast path of the
 * parsers, kept in one place. With SSE2, a line within the 64 bytes from where it begins has
 * its fields from bit masks of those bytes (line_masks), without a chain of byte loads from one
 * field to the next. The masks are computed once per 64 bytes of the text, for the chunks
 * [base, base + 64) and [base + 64, base + 128) that the 64 bytes from a line's start span,
 * and shifted together to that start (a run line of about 40 bytes used to take the masks of
 * the 64 bytes from its own start: most bytes classified twice). Otherwise, and for the last
 * bytes, byte by byte.
 */
typedef struct {
    const char *s;
    size_t len, i; /* the text, and where the next line begins */
#if RAGMETER_SSE2
    size_t base; /* the masks' chunks begin here (a multiple of 64), when `have` */
    int have;
    uint64_t nl[2], nonfield[2];
#endif
} line_reader;

enum { LINE_END = -1, LINE_DECLINED = -2, LINE_SKIP = 0, LINE_FIELDS = 1 };

#if RAGMETER_SSE2
/* The masks of the 64 bytes from i (bit 0: s[i]): 1; 0 where fewer than 64 bytes are left;
   -1 where a byte of class 3 is in them or in the chunk after (the text is declined either
   way, now or at its line). */
static inline int window_masks(line_reader *r, size_t i, uint64_t *nl, uint64_t *nonfield) {
    const size_t base = i & ~(size_t)63;
    uint64_t bad = 0;
    if (base + 128 > r->len) { /* the last chunks: the 64 bytes at i, if there are 64 */
        if (i + 64 > r->len) return 0;
        line_masks(r->s + i, nl, &bad, nonfield);
        return bad ? -1 : 1;
    }
    if (!r->have || base != r->base) {
        if (r->have && base == r->base + 64) { /* the next chunk: the high one becomes low */
            r->nl[0] = r->nl[1];
            r->nonfield[0] = r->nonfield[1];
        } else {
            line_masks(r->s + base, &r->nl[0], &bad, &r->nonfield[0]);
        }
        uint64_t bad_high;
        line_masks(r->s + base + 64, &r->nl[1], &bad_high, &r->nonfield[1]);
        if (bad | bad_high) return -1;
        r->base = base;
        r->have = 1;
    }
    const unsigned o = (unsigned)(i - base);
    /* (hi << 1) << (63 - o): hi << (64 - o), and 0 for o == 0 (a shift by 64 is undefined) */
    *nl = (r->nl[0] >> o) | ((r->nl[1] << 1) << (63 - o));
    *nonfield = (r->nonfield[0] >> o) | ((r->nonfield[1] << 1) << (63 - o));
    return 1;
}
#endif

/*
 * The next line: LINE_FIELDS with its nf fields in fp/fn (those of the bits of `want`: the
 * others are counted, not located), LINE_SKIP for a blank or comment
 * line ('#' first), LINE_END past the last line, LINE_DECLINED for a line the fast path does
 * not read as the Python reader does (a byte of class 3, or not exactly nf fields: the Python
 * path says what is wrong, or warns).
 */
static inline int next_fields(line_reader *r, const char **fp, size_t *fn, int nf,
                              unsigned want) {
    const char *s = r->s;
    const size_t len = r->len;
    size_t i = r->i;
    if (i >= len) return LINE_END;
    int k = 0;
#if RAGMETER_SSE2
    uint64_t nl, nonfield;
    const int window = window_masks(r, i, &nl, &nonfield);
    if (window < 0) return LINE_DECLINED; /* a byte of class 3 */
    if (window && nl) {
        const int e = __builtin_ctzll(nl);
        const uint64_t below = (1ULL << e) - 1; /* the line's bytes (e < 64) */
        const uint64_t field = ~nonfield & below; /* bit 63 clear: e < 64 */
        uint64_t st = field & ~(field << 1);
        const char *line = s + i;
        r->i = i + (size_t)e + 1;
        if (!st) return LINE_SKIP; /* blank */
        if (line[__builtin_ctzll(st)] == '#') return LINE_SKIP; /* comment */
        /* the fields' starts from the lowest bits (no popcount: not an instruction of every
           x86-64, a library call without -mpopcnt); a wanted field's length is the run of
           field bits from its start (the complement's lowest bit past it: bit 63 at most) */
        for (; k < nf; k++) {
            if (!st) return LINE_DECLINED; /* too few fields */
            if (want >> k & 1) {
                const int a = __builtin_ctzll(st);
                fp[k] = line + a;
                fn[k] = (size_t)__builtin_ctzll(~(field >> a));
            }
            st &= st - 1;
        }
        return st ? LINE_DECLINED : LINE_FIELDS; /* extra fields: the Python path warns */
    }
#endif
    for (;;) {
        while (i < len && CLS[(unsigned char)s[i]] == 1) i++;
        if (i >= len) break;
        unsigned char c = CLS[(unsigned char)s[i]];
        if (c == 2) break;
        if (c == 3) return LINE_DECLINED;
        size_t a = i;
        i = field_end(s, i, len);
        if (i < len && CLS[(unsigned char)s[i]] == 3) return LINE_DECLINED;
        if (k == 0 && s[a] == '#') { /* comment line */
            while (i < len && s[i] != '\n') {
                if (CLS[(unsigned char)s[i]] == 3) return LINE_DECLINED;
                i++;
            }
            k = -1;
            break;
        }
        if (k >= nf) return LINE_DECLINED; /* extra fields: the Python path warns */
        fp[k] = s + a;
        fn[k] = i - a;
        k++;
    }
    if (i < len) i++; /* newline */
    r->i = i;
    if (k <= 0) return LINE_SKIP;
    return k == nf ? LINE_FIELDS : LINE_DECLINED;
}

/*
 * Query ids seen so far: their bytes in qdata (offsets int64 in qoffs), and an open-addressing
 * table of their codes keyed by the bytes. A Python dict of bytes keys cost about 120 bytes per
 * query (1.2 GB at 10 M queries); this table costs 8 bytes per query at most.
 */
typedef struct {
    int32_t *slots; /* code, or -1 for an empty slot */
    size_t cap;     /* a power of two, at least twice the number of codes */
} qtable;

static inline void qid_at(const vec *qoffs, const vec *qdata, int32_t code, const char **p,
                          size_t *n) {
    const int64_t *o = (const int64_t *)qoffs->p;
    *p = qdata->p + o[code];
    *n = (size_t)(o[code + 1] - o[code]);
}

/* Grow the table to `cap` slots and insert codes 0..nq-1 again. 0, or -1 out of memory. */
static int qtable_resize(qtable *t, size_t cap, const vec *qoffs, const vec *qdata, int32_t nq) {
    int32_t *slots = malloc(cap * sizeof(int32_t));
    if (!slots) return -1;
    memset(slots, 0xff, cap * sizeof(int32_t));
    for (int32_t c = 0; c < nq; c++) {
        const char *p;
        size_t n;
        qid_at(qoffs, qdata, c, &p, &n);
        size_t slot = hash_bytes(p, n) & (cap - 1);
        while (slots[slot] >= 0) slot = (slot + 1) & (cap - 1);
        slots[slot] = c;
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

/* The slot holding query id (p, n), or the empty slot where it would go. */
static size_t qtable_find(const qtable *t, const vec *qoffs, const vec *qdata, const char *p,
                          size_t n) {
    size_t slot = hash_bytes(p, n) & (t->cap - 1);
    while (t->slots[slot] >= 0) {
        const char *o;
        size_t on;
        qid_at(qoffs, qdata, t->slots[slot], &o, &on);
        if (on == n && memcmp(o, p, n) == 0) break;
        slot = (slot + 1) & (t->cap - 1);
    }
    return slot;
}

/* Doc offsets switch from int32 to int64 in place once the doc bytes pass 2**31 - 1. */
static int widen_offsets(vec *offs) {
    size_t count = offs->len / 4;
    if (vec_reserve(offs, offs->len)) return -1;
    const int32_t *src = (const int32_t *)offs->p;
    int64_t *dst = (int64_t *)offs->p;
    /* backwards: dst[k] overwrites src[2k], src[2k+1], read already for k > 0 */
    for (size_t k = count; k-- > 0;) dst[k] = (int64_t)src[k];
    offs->len = count * 8;
    return 0;
}

/*
 * parse_trec(data, kind, mapped=False, wide_at=2**31-1) -> None | (qid_offsets: bytearray
 *     int64[nq+1], qid_data: bytearray,
 *     qcode: bytearray int32[n],
 *     doc_offsets: bytearray int32/int64[n+1], doc_data: bytearray, values: bytearray,
 *     last_tag: bytes | None, wide: bool)
 * kind 0: run "qid Q0 doc rank score tag" (values float64); kind 1: qrels "qid iter doc grade"
 * (values int32: the parser declines grades outside ±(2**31 - 1)). Doc offsets are int32 unless
 * the doc bytes pass 2**31 - 1 (`wide`).
 */
/*
 * After parsing a stretch of a memory-mapped file, tell the kernel its pages are no longer
 * needed: a file-backed page is simply dropped (and read again if touched), so a 4 GB run
 * file does not stay resident next to its parsed columns. Only for mapped files: on ordinary
 * memory MADV_DONTNEED would zero the bytes.
 */
static void release_pages(const char *base, size_t from, size_t to) {
#if defined(MADV_DONTNEED) && (defined(__unix__) || defined(__APPLE__))
    static long page = 0;
    if (!page) page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return;
    uintptr_t a = ((uintptr_t)(base + from) + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t b = (uintptr_t)(base + to) & ~((uintptr_t)page - 1);
    if (b > a) madvise((void *)a, b - a, MADV_DONTNEED);
#else
    (void)base; (void)from; (void)to;
#endif
}

CLONED static PyObject *parse_trec(PyObject *self, PyObject *args) {
    Py_buffer buf;
    int kind;
    int mapped = 0; /* 1: buf is a read-only file mapping whose parsed pages may be dropped */
    Py_ssize_t wide_at = INT32_MAX; /* doc bytes past which offsets widen (tests lower it) */
    if (!PyArg_ParseTuple(args, "y*i|pn", &buf, &kind, &mapped, &wide_at)) return NULL;
    if (wide_at < 0 || wide_at > INT32_MAX) wide_at = INT32_MAX;
    size_t released = 0;
    const char *s = buf.buf;
    const size_t len = (size_t)buf.len;
    const int nf = kind == 0 ? 6 : 4;
    const int doc_field = 2, val_field = kind == 0 ? 4 : 3;
    const size_t vsize = kind == 0 ? 8 : 4;
    int wide = 0;

    vec qcode = {0}, offs = {0}, docs = {0}, vals = {0}, qoffs = {0}, qdata = {0};
    qtable qt = {NULL, 0};
    int32_t nq = 0;
    PyObject *result = NULL, *tag = NULL;
    const char *prev_q = NULL;
    size_t prev_qn = 0;
    int32_t cur_code = -1;
    /* Whether every new query id so far came after the one before it in byte order, and in
       (length, bytes) order (unpadded numbers' numeric order): while either holds, a query id
       that differs from the previous line's is after every id seen (the previous line's is the
       last new one), so it is new without a look-up in the table, which is built (qt.slots)
       only once both fail. Most files list their queries in one of these orders: one probe
       per query into a table of megabytes, and its rehashing as it grows, cost a third of
       the parse at a million queries. */
    int byte_up = 1, num_up = 1;
    size_t n = 0;
    int ok = 0;
    const char *last_tag = NULL;
    size_t last_tag_n = 0;

    /* rough sizing: ~35 bytes per run line, ~20 per qrels line */
    size_t guess = len / (kind == 0 ? 30 : 16) + 16;
    if (vec_reserve(&qcode, guess * 4) || vec_reserve(&offs, (guess + 1) * 4) ||
        vec_reserve(&vals, guess * vsize) || vec_reserve(&docs, len / 4 + 16))
        goto nomem;
    if (vec_reserve(&qoffs, 8)) goto nomem;
    { int64_t z = 0; memcpy(qoffs.p, &z, 8); qoffs.len = 8; }
    { int32_t z = 0; memcpy(offs.p, &z, 4); offs.len = 4; }
    /* the columns are written front to back: their pages made ready 4 MB at a time */
    vec_ahead(&qcode, (size_t)4 << 20);
    vec_ahead(&offs, (size_t)4 << 20);
    vec_ahead(&vals, (size_t)4 << 20);
    vec_ahead(&docs, (size_t)4 << 20);

    line_reader r = {.s = s, .len = len, .i = 0};
    for (;;) {
        if (mapped && r.i - released >= ((size_t)64 << 20)) {
            /* keep the current query id's bytes: prev_q may point into this stretch */
            size_t keep = prev_q ? (size_t)(prev_q - s) : r.i;
            if (keep > released) {
                release_pages(s, released, keep);
                released = keep;
            }
        }
        const char *fp[6];
        size_t fn[6];
        /* the run's tag (its last line's, for the run's name) and the qrels' grade are read */
        const int got = next_fields(&r, fp, fn, nf, kind == 0 ? 0x35u : 0x0du);
        if (got == LINE_END) break;
        if (got == LINE_SKIP) continue; /* blank or comment */
        if (got == LINE_DECLINED) goto fallback;
        /* query code: consecutive rows usually share it */
        if (!(prev_q && fn[0] == prev_qn && same_bytes_in(fp[0], prev_q, prev_qn, s + len))) {
            size_t slot = 0;
            if (prev_q && !qt.slots) {
                const int c = cmp_bytes(fp[0], fn[0], prev_q, prev_qn);
                byte_up = byte_up && c > 0;
                num_up = num_up && (fn[0] > prev_qn || (fn[0] == prev_qn && c > 0));
                if (!byte_up && !num_up) {
                    /* the table of the ids so far: at least twice as many slots as ids */
                    size_t cap = 1024;
                    while (cap < 2 * ((size_t)nq + 1)) cap *= 2;
                    if (qtable_resize(&qt, cap, &qoffs, &qdata, nq)) goto nomem;
                }
            }
            if (qt.slots) slot = qtable_find(&qt, &qoffs, &qdata, fp[0], fn[0]);
            if (qt.slots && qt.slots[slot] >= 0) {
                cur_code = qt.slots[slot];
            } else {
                if (nq >= INT32_MAX - 1) goto fallback;
                if (vec_reserve(&qdata, fn[0]) || vec_reserve(&qoffs, 8)) goto nomem;
                memcpy(qdata.p + qdata.len, fp[0], fn[0]);
                qdata.len += fn[0];
                { int64_t o = (int64_t)qdata.len; memcpy(qoffs.p + qoffs.len, &o, 8); qoffs.len += 8; }
                if (qt.slots) qt.slots[slot] = nq;
                cur_code = nq++;
                if (qt.slots && (size_t)nq * 2 > qt.cap &&
                    qtable_resize(&qt, qt.cap * 2, &qoffs, &qdata, nq))
                    goto nomem;
            }
            prev_q = fp[0];
            prev_qn = fn[0];
        }
        if (!wide && docs.len + fn[doc_field] > (size_t)wide_at) {
            if (widen_offsets(&offs)) goto nomem;
            wide = 1;
        }
        if (vec_reserve(&qcode, 4) || vec_reserve(&offs, 8) || vec_reserve(&vals, vsize) ||
            vec_reserve(&docs, fn[doc_field] + 16))
            goto nomem;
        memcpy(qcode.p + qcode.len, &cur_code, 4);
        qcode.len += 4;
        if (fn[doc_field] <= 16 && (size_t)(s + len - fp[doc_field]) >= 16)
            /* 16 bytes in one move rather than a call: the bytes past the doc are in the
               reserve, and the next doc (or the shrink to the length) overwrites them */
            memcpy(docs.p + docs.len, fp[doc_field], 16);
        else
            memcpy(docs.p + docs.len, fp[doc_field], fn[doc_field]);
        docs.len += fn[doc_field];
        if (wide) { int64_t o = (int64_t)docs.len; memcpy(offs.p + offs.len, &o, 8); offs.len += 8; }
        else { int32_t o = (int32_t)docs.len; memcpy(offs.p + offs.len, &o, 4); offs.len += 4; }
        if (kind == 0) {
            double v;
            if (plain_decimal_at(fp[val_field], fn[val_field], s + len, &v) &&
                parse_float(fp[val_field], fn[val_field], &v))
                goto fallback;
            memcpy(vals.p + vals.len, &v, 8);
            last_tag = fp[5];
            last_tag_n = fn[5];
        } else {
            int64_t g;
            if (parse_grade(fp[val_field], fn[val_field], &g)) goto fallback;
            int32_t g32 = (int32_t)g; /* parse_grade keeps it within ±(2**31 - 1) */
            memcpy(vals.p + vals.len, &g32, 4);
        }
        vals.len += vsize;
        n++;
    }
    if (n == 0) goto fallback;
    ok = 1;
    goto done;

nomem:
    PyErr_NoMemory();
    goto done;
fallback:
    ok = 2;
done:
    PyBuffer_Release(&buf);
    if (ok == 1) {
        if (last_tag) tag = PyBytes_FromStringAndSize(last_tag, (Py_ssize_t)last_tag_n);
        else { tag = Py_None; Py_INCREF(tag); }
        PyObject *a = vec_to_bytearray(&qcode), *b = vec_to_bytearray(&offs),
                 *c = vec_to_bytearray(&docs), *d = vec_to_bytearray(&vals),
                 *e = vec_to_bytearray(&qoffs), *f = vec_to_bytearray(&qdata);
        if (tag && a && b && c && d && e && f)
            result = Py_BuildValue("(NNNNNNNO)", e, f, a, b, c, d, tag, wide ? Py_True : Py_False);
        else {
            Py_XDECREF(a); Py_XDECREF(b); Py_XDECREF(c); Py_XDECREF(d); Py_XDECREF(tag);
            Py_XDECREF(e); Py_XDECREF(f);
        }
    } else if (ok == 2) {
        result = Py_None;
        Py_INCREF(result);
    }
    free(qcode.p); free(offs.p); free(docs.p); free(vals.p); free(qoffs.p); free(qdata.p);
    free(qt.slots);
    return result;
}

/* ---------------------------------------------------------------- helpers for array args */

typedef struct {
    Py_buffer offsets, data;
    int have_off, have_data;
    strarr s;
} strargs;

static int get_strarr(PyObject *off, PyObject *data, int wide, Py_ssize_t base, strargs *a) {
    memset(a, 0, sizeof(*a));
    if (PyObject_GetBuffer(off, &a->offsets, PyBUF_SIMPLE)) return -1;
    a->have_off = 1;
    if (PyObject_GetBuffer(data, &a->data, PyBUF_SIMPLE)) return -1;
    a->have_data = 1;
    a->s.data = a->data.buf;
    a->s.offsets = a->offsets.buf;
    a->s.wide = wide;
    a->s.base = base;
    return 0;
}

static void release_strarr(strargs *a) {
    if (a->have_off) PyBuffer_Release(&a->offsets);
    if (a->have_data) PyBuffer_Release(&a->data);
}

/* ---------------------------------------------------------------- encode */

/*
 * encode(offsets, data, wide, base, n) -> (codes: bytearray int64[n], first_rows: bytearray
 * int64[n_distinct]). Codes in order of first appearance (as Arrow's dictionary_encode).
 */
static PyObject *encode(PyObject *self, PyObject *args) {
    PyObject *off, *data;
    int wide;
    Py_ssize_t base, n;
    if (!PyArg_ParseTuple(args, "OOinn", &off, &data, &wide, &base, &n)) return NULL;
    strargs sa;
    PyObject *codes_obj = NULL, *result = NULL;
    int64_t *table = NULL;
    vec first = {0};
    if (get_strarr(off, data, wide, base, &sa)) goto done;
    char *cbuf = NULL;
    codes_obj = new_bytearray(n * 8, &cbuf);
    if (!codes_obj) goto done;
    int64_t *codes = (int64_t *)cbuf;
    size_t cap = 1024;
    size_t used = 0;
    table = malloc(cap * sizeof(int64_t));
    if (!table) { PyErr_NoMemory(); goto done; }
    for (size_t j = 0; j < cap; j++) table[j] = -1;
    const char *pp = NULL;
    size_t pn = 0;
    int64_t pcode = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *p;
        size_t ln;
        str_at(&sa.s, i, &p, &ln);
        if (pcode >= 0 && ln == pn && memcmp(p, pp, ln) == 0) { codes[i] = pcode; continue; }
        uint64_t h = hash_bytes(p, ln);
        size_t slot = h & (cap - 1);
        int64_t code = -1;
        while (table[slot] >= 0) {
            int64_t row = ((int64_t *)first.p)[table[slot]];
            const char *q;
            size_t qn;
            str_at(&sa.s, row, &q, &qn);
            if (qn == ln && memcmp(p, q, ln) == 0) { code = table[slot]; break; }
            slot = (slot + 1) & (cap - 1);
        }
        if (code < 0) {
            code = (int64_t)used;
            if (vec_reserve(&first, 8)) { PyErr_NoMemory(); goto done; }
            memcpy(first.p + first.len, &(int64_t){i}, 8);
            first.len += 8;
            table[slot] = code;
            used++;
            if (used * 2 > cap) { /* grow + rehash */
                size_t ncap = cap * 2;
                int64_t *nt = malloc(ncap * sizeof(int64_t));
                if (!nt) { PyErr_NoMemory(); goto done; }
                for (size_t j = 0; j < ncap; j++) nt[j] = -1;
                for (size_t c = 0; c < used; c++) {
                    const char *q;
                    size_t qn;
                    str_at(&sa.s, ((int64_t *)first.p)[c], &q, &qn);
                    size_t s2 = hash_bytes(q, qn) & (ncap - 1);
                    while (nt[s2] >= 0) s2 = (s2 + 1) & (ncap - 1);
                    nt[s2] = (int64_t)c;
                }
                free(table);
                table = nt;
                cap = ncap;
            }
        }
        codes[i] = code;
        pp = p; pn = ln; pcode = code;
    }
    PyObject *f = vec_to_bytearray(&first);
    if (f) result = Py_BuildValue("(ON)", codes_obj, f);
done:
    release_strarr(&sa);
    free(table);
    free(first.p);
    Py_XDECREF(codes_obj);
    return result;
}

/* ---------------------------------------------------------------- ordering */

typedef struct {
    const double *scores; /* NULL: order by doc ascending (qrels) */
    const strarr *docs;
} order_ctx;

/* run: score desc, doc desc, row asc. qrels: doc asc, row asc. */
static inline int before(const order_ctx *c, int64_t a, int64_t b) {
    const char *pa, *pb;
    size_t na, nb;
    if (c->scores) {
        double sa = c->scores[a], sb = c->scores[b];
        if (sa != sb) return sa > sb;
        str_at(c->docs, a, &pa, &na);
        str_at(c->docs, b, &pb, &nb);
        int k = cmp_bytes(pa, na, pb, nb);
        if (k) return k > 0;
        return a < b;
    }
    str_at(c->docs, a, &pa, &na);
    str_at(c->docs, b, &pb, &nb);
    int k = cmp_bytes(pa, na, pb, nb);
    if (k) return k < 0;
    return a < b;
}

static void merge_sort(const order_ctx *c, int64_t *v, int64_t *tmp, size_t n) {
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            int64_t x = v[i];
            size_t j = i;
            while (j > 0 && before(c, x, v[j - 1])) { v[j] = v[j - 1]; j--; }
            v[j] = x;
        }
        return;
    }
    size_t h = n / 2;
    merge_sort(c, v, tmp, h);
    merge_sort(c, v + h, tmp, n - h);
    if (!before(c, v[h], v[h - 1])) return;
    memcpy(tmp, v, h * sizeof(int64_t));
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) v[k++] = before(c, v[j], tmp[i]) ? v[j++] : tmp[i++];
    while (i < h) v[k++] = tmp[i++];
}

/* The first 8 bytes of row i's doc as a big-endian number, short ones padded with zero
   bytes: where two rows' prefixes differ, they order the rows as cmp_bytes does (a zero pad
   is below any byte but a NUL, and a NUL pads equal); where they are equal, cmp_bytes decides. */
static inline uint64_t doc_prefix(const strarr *s, int64_t i) {
    const char *p;
    size_t n;
    str_at(s, i, &p, &n);
    uint64_t k = 0;
    if (n >= 8) {
        memcpy(&k, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        k = __builtin_bswap64(k);
#endif
        return k;
    }
    for (size_t j = 0; j < 8; j++) k = (k << 8) | (j < n ? (unsigned char)p[j] : 0);
    return k;
}

typedef struct {
    uint64_t prefix;
    int64_t row;
} keyed_row;

/* doc ascending, row ascending (see `before` without scores), the prefixes first */
static inline int keyed_before(const strarr *s, const keyed_row *a, const keyed_row *b) {
    if (a->prefix != b->prefix) return a->prefix < b->prefix;
    const char *pa, *pb;
    size_t na, nb;
    str_at(s, a->row, &pa, &na);
    str_at(s, b->row, &pb, &nb);
    int k = cmp_bytes(pa, na, pb, nb);
    if (k) return k < 0;
    return a->row < b->row;
}

/* Rows v[0..len) by doc ascending then row, for a query of few judgments (len <= KEYED_MAX):
   an insertion sort over the docs' prefixes, which mostly decide without reading the docs. */
#define KEYED_MAX 64
/* qrels_place places a query of up to this many judgments by counting (len**2 comparisons) */
#define RANKED_MAX 16
static void keyed_sort(const strarr *s, int64_t *v, size_t len) {
    keyed_row r[KEYED_MAX];
    for (size_t i = 0; i < len; i++) {
        keyed_row x = {doc_prefix(s, v[i]), v[i]};
        size_t j = i;
        while (j > 0 && keyed_before(s, &x, &r[j - 1])) { r[j] = r[j - 1]; j--; }
        r[j] = x;
    }
    for (size_t i = 0; i < len; i++) v[i] = r[i].row;
}

/*
 * order(qrank: int64[n] or int32[n] buffer, n_queries, scores: float64[n] buffer | None, doc
 * offsets, doc data, wide, base, dedupe: bool, narrow: bool = False) -> (perm: read-only
 * buffer int64[m] (int32[m] with `narrow`), offsets: bytearray int64[n_queries+1], n_dupes)
 * Rows grouped by qrank (ascending, stable), ordered within a query (see `before`); with
 * `dedupe` later rows repeating a (query, doc) are dropped, else only counted. The width of
 * qrank is its buffer's item size (a numpy array's; plain bytes are read as int64). `narrow`
 * halves the permutation of a large input (100 M rows: 400 MB less at its peak).
 */
static PyObject *order(PyObject *self, PyObject *args) {
    PyObject *qrank_obj, *scores_obj, *off, *data;
    Py_ssize_t nq, base;
    int wide, dedupe, narrow = 0;
    if (!PyArg_ParseTuple(args, "OnOOOinp|p", &qrank_obj, &nq, &scores_obj, &off, &data, &wide,
                          &base, &dedupe, &narrow))
        return NULL;
    Py_buffer qb, sb;
    int have_q = 0, have_s = 0;
    strargs sa;
    memset(&sa, 0, sizeof(sa));
    PyObject *perm_obj = NULL, *offs_obj = NULL, *result = NULL;
    int64_t *tmp = NULL, *table = NULL, *seg = NULL;
    vec perm_vec = {0};
    if (PyObject_GetBuffer(qrank_obj, &qb, PyBUF_FORMAT | PyBUF_ND)) goto done;
    have_q = 1;
    if (scores_obj != Py_None) {
        if (PyObject_GetBuffer(scores_obj, &sb, PyBUF_SIMPLE)) goto done;
        have_s = 1;
    }
    if (get_strarr(off, data, wide, base, &sa)) goto done;
    const int key32 = qb.itemsize == 4;
    const int64_t *qrank64 = qb.buf;
    const int32_t *qrank32 = qb.buf;
#define QRANK(i) (key32 ? (int64_t)qrank32[i] : qrank64[i])
    Py_ssize_t n = qb.len / (key32 ? 4 : 8);
    if (narrow && n > INT32_MAX) narrow = 0;
    if (have_s && sb.len / 8 != n) { PyErr_SetString(PyExc_ValueError, "length mismatch"); goto done; }
    char *obuf = NULL;
    /* malloc'd, not a bytearray: shrinking a bytearray to half its size keeps its memory */
    /* int32 rows with `narrow` from the start: an int64 permutation narrowed at the end
       would peak at twice the size (0.8 GB at 100 M rows) */
    perm_vec.cap = n ? (size_t)n * (narrow ? 4 : 8) : 1;
    perm_vec.p = malloc(perm_vec.cap);
    if (!perm_vec.p) { PyErr_NoMemory(); goto done; }
    offs_obj = new_bytearray((nq + 1) * 8, &obuf);
    if (!offs_obj) goto done;
    int64_t *offs = (int64_t *)obuf;
#define PGET(k) (narrow ? (int64_t)((int32_t *)perm_vec.p)[k] : ((int64_t *)perm_vec.p)[k])
#define PSET(k, x)                                                                          \
    do {                                                                                     \
        if (narrow) ((int32_t *)perm_vec.p)[k] = (int32_t)(x);                               \
        else ((int64_t *)perm_vec.p)[k] = (x);                                               \
    } while (0)
    /* counting sort by query rank */
    memset(offs, 0, (nq + 1) * 8);
    int grouped = 1; /* ranks never decrease: the stable counting sort leaves every row */
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t r = QRANK(i);
        if (r < 0 || r >= nq) { PyErr_SetString(PyExc_ValueError, "rank out of range"); goto done; }
        if (i && r < QRANK(i - 1)) grouped = 0;
        offs[r + 1]++;
    }
    for (Py_ssize_t q = 0; q < nq; q++) offs[q + 1] += offs[q];
    if (grouped) {
        for (Py_ssize_t i = 0; i < n; i++) PSET(i, i);
    } else {
        int64_t *pos = malloc((nq + 1) * 8);
        if (!pos) { PyErr_NoMemory(); goto done; }
        memcpy(pos, offs, (nq + 1) * 8);
        for (Py_ssize_t i = 0; i < n; i++) PSET(pos[QRANK(i)]++, i);
        free(pos);
    }
    order_ctx ctx = {have_s ? (const double *)sb.buf : NULL, &sa.s};
    size_t maxlen = 0;
    for (Py_ssize_t q = 0; q < nq; q++)
        if ((size_t)(offs[q + 1] - offs[q]) > maxlen) maxlen = (size_t)(offs[q + 1] - offs[q]);
    tmp = malloc((maxlen / 2 + 1) * sizeof(int64_t));
    seg = malloc((maxlen + 1) * sizeof(int64_t));
    size_t tcap = 16;
    while (tcap < 2 * maxlen) tcap *= 2;
    table = malloc(tcap * sizeof(int64_t));
    if (!tmp || !table || !seg) { PyErr_NoMemory(); goto done; }
    int64_t w = 0, dupes = 0;
    for (Py_ssize_t q = 0; q < nq; q++) {
        int64_t a = offs[q], b = offs[q + 1];
        size_t len = (size_t)(b - a);
        /* the query's rows, sorted in an int64 copy; written back from w (≤ a: the rows of
           later queries are not touched) */
        int64_t *v = seg;
        for (size_t i = 0; i < len; i++) v[i] = PGET(a + (int64_t)i);
        if (!have_s && len <= KEYED_MAX) {
            keyed_sort(&sa.s, v, len);
        } else {
            int sorted = 1;
            for (size_t i = 1; i < len; i++)
                if (!before(&ctx, v[i - 1], v[i])) { sorted = 0; break; }
            if (!sorted) merge_sort(&ctx, v, tmp, len);
        }
        offs[q] = w;
        if (len < 2) {
            if (len) { PSET(w, v[0]); w++; }
            continue;
        }
        if (!have_s) {
            /* sorted by doc: duplicates are adjacent */
            const char *pp, *cp;
            size_t pn, cn;
            str_at(&sa.s, v[0], &pp, &pn);
            PSET(w, v[0]);
            w++;
            for (size_t i = 1; i < len; i++) {
                str_at(&sa.s, v[i], &cp, &cn);
                if (cn == pn && memcmp(cp, pp, cn) == 0) {
                    dupes++;
                    if (dedupe) continue;
                }
                PSET(w, v[i]);
                w++;
                pp = cp; pn = cn;
            }
            continue;
        }
        size_t cap = 16;
        while (cap < 2 * len) cap *= 2;
        for (size_t j = 0; j < cap; j++) table[j] = -1;
        for (size_t i = 0; i < len; i++) {
            int64_t row = v[i];
            const char *p;
            size_t ln;
            str_at(&sa.s, row, &p, &ln);
            size_t slot = hash_bytes(p, ln) & (cap - 1);
            int dup = 0;
            while (table[slot] >= 0) {
                const char *o;
                size_t on;
                str_at(&sa.s, table[slot], &o, &on);
                if (on == ln && memcmp(o, p, ln) == 0) { dup = 1; break; }
                slot = (slot + 1) & (cap - 1);
            }
            if (dup) {
                dupes++;
                if (dedupe) continue;
            } else {
                table[slot] = row;
            }
            PSET(w, row);
            w++;
        }
    }
#undef QRANK
#undef PGET
#undef PSET
    offs[nq] = w;
    perm_vec.len = (size_t)w * (narrow ? 4 : 8);
    perm_obj = vec_to_bytearray(&perm_vec); /* shrunk to its length: the rest goes back */
    if (!perm_obj) goto done;
    result = Py_BuildValue("(OOL)", perm_obj, offs_obj, (long long)dupes);
done:
    if (have_q) PyBuffer_Release(&qb);
    if (have_s) PyBuffer_Release(&sb);
    release_strarr(&sa);
    free(tmp);
    free(table);
    free(seg);
    free(perm_vec.p);
    Py_XDECREF(perm_obj);
    Py_XDECREF(offs_obj);
    return result;
}

/* ---------------------------------------------------------------- take */

/*
 * take_strings(offsets, data, wide, base, n, positions: int32[m] or int64[m] buffer) ->
 * (offsets: int32[m+1] or int64[m+1], data, wide_out: bool)
 * Row positions[k] of a string array as row k of a new one, sized exactly (Arrow's take grows
 * its output: 140 MB over the 1.2 GB of a 100 M-row doc-id column). The output offsets are
 * int64 when the input's are or its bytes pass 2**31 - 1.
 */
static PyObject *take_strings(PyObject *self, PyObject *args) {
    PyObject *off, *data, *pos_obj;
    int wide;
    Py_ssize_t base, rows;
    if (!PyArg_ParseTuple(args, "OOinnO", &off, &data, &wide, &base, &rows, &pos_obj))
        return NULL;
    strargs sa;
    Py_buffer pb;
    int have_p = 0;
    PyObject *result = NULL;
    vec out_off = {0}, out_data = {0};
    if (get_strarr(off, data, wide, base, &sa)) goto done;
    if (PyObject_GetBuffer(pos_obj, &pb, PyBUF_FORMAT | PyBUF_ND)) goto done;
    have_p = 1;
    const int pos32 = pb.itemsize == 4;
    const Py_ssize_t m = pb.len / (pos32 ? 4 : 8);
    size_t total = 0;
    for (Py_ssize_t k = 0; k < m; k++) {
        int64_t r = pos32 ? (int64_t)((const int32_t *)pb.buf)[k] : ((const int64_t *)pb.buf)[k];
        if (r < 0 || r >= rows) {
            PyErr_SetString(PyExc_IndexError, "take_strings: position out of range");
            goto done;
        }
        const char *p;
        size_t n;
        str_at(&sa.s, r, &p, &n);
        total += n;
    }
    const int wide_out = wide || total > (size_t)INT32_MAX;
    if (vec_reserve_whole(&out_off, (size_t)(m + 1) * (wide_out ? 8 : 4)) ||
        vec_reserve_whole(&out_data, total ? total : 1)) {
        PyErr_NoMemory();
        goto done;
    }
    size_t at = 0;
    for (Py_ssize_t k = 0; k <= m; k++) {
        if (wide_out) ((int64_t *)out_off.p)[k] = (int64_t)at;
        else ((int32_t *)out_off.p)[k] = (int32_t)at;
        if (k == m) break;
        int64_t r = pos32 ? (int64_t)((const int32_t *)pb.buf)[k] : ((const int64_t *)pb.buf)[k];
        const char *p;
        size_t n;
        str_at(&sa.s, r, &p, &n);
        memcpy(out_data.p + at, p, n);
        at += n;
    }
    out_off.len = (size_t)(m + 1) * (wide_out ? 8 : 4);
    out_data.len = total;
    PyObject *a = vec_to_bytearray(&out_off), *b = vec_to_bytearray(&out_data);
    if (a && b) result = Py_BuildValue("(NNO)", a, b, wide_out ? Py_True : Py_False);
    else { Py_XDECREF(a); Py_XDECREF(b); }
done:
    release_strarr(&sa);
    if (have_p) PyBuffer_Release(&pb);
    free(out_off.p);
    free(out_data.p);
    return result;
}

/* ---------------------------------------------------------------- re-gathering parsed docs */

/*
 * permute_offsets(offsets, wide, base, n, perm: int32[n] or int64[n]) -> (new_offsets:
 * int32[n+1] or int64[n+1], inverse: int32[n] or int64[n] (as perm), wide_out: bool)
 * The offsets of a string array whose row k is row perm[k] of the given one (lengths only:
 * the bytes are not read), and the inverse permutation (row i goes to inverse[i]). perm must
 * be a permutation of 0..n-1.
 */
static PyObject *permute_offsets(PyObject *self, PyObject *args) {
    PyObject *off, *perm_obj;
    int wide;
    Py_ssize_t base, n;
    if (!PyArg_ParseTuple(args, "OinnO", &off, &wide, &base, &n, &perm_obj)) return NULL;
    Py_buffer ob, pb;
    int have_o = 0, have_p = 0;
    PyObject *result = NULL;
    vec out_off = {0}, inv = {0};
    if (PyObject_GetBuffer(off, &ob, PyBUF_SIMPLE)) goto done;
    have_o = 1;
    if (PyObject_GetBuffer(perm_obj, &pb, PyBUF_FORMAT | PyBUF_ND)) goto done;
    have_p = 1;
    const int p32 = pb.itemsize == 4;
    if (pb.len / (p32 ? 4 : 8) != n || ob.len / (wide ? 8 : 4) < base + n + 1) {
        PyErr_SetString(PyExc_ValueError, "permute_offsets: length mismatch");
        goto done;
    }
#define OLD(i) (wide ? ((const int64_t *)ob.buf)[base + (i)] : (int64_t)((const int32_t *)ob.buf)[base + (i)])
#define PERM(k) (p32 ? (int64_t)((const int32_t *)pb.buf)[k] : ((const int64_t *)pb.buf)[k])
    size_t total = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        int64_t r = PERM(k);
        if (r < 0 || r >= n) {
            PyErr_SetString(PyExc_IndexError, "permute_offsets: position out of range");
            goto done;
        }
        total += (size_t)(OLD(r + 1) - OLD(r));
    }
    const int wide_out = wide || total > (size_t)INT32_MAX;
    if (vec_reserve_whole(&out_off, (size_t)(n + 1) * (wide_out ? 8 : 4)) ||
        vec_reserve_whole(&inv, (size_t)(n ? n : 1) * (p32 ? 4 : 8))) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t at = 0;
    for (Py_ssize_t k = 0; k <= n; k++) {
        if (wide_out) ((int64_t *)out_off.p)[k] = at;
        else ((int32_t *)out_off.p)[k] = (int32_t)at;
        if (k == n) break;
        int64_t r = PERM(k);
        at += OLD(r + 1) - OLD(r);
        if (p32) ((int32_t *)inv.p)[r] = (int32_t)k;
        else ((int64_t *)inv.p)[r] = (int64_t)k;
    }
#undef OLD
#undef PERM
    out_off.len = (size_t)(n + 1) * (wide_out ? 8 : 4);
    inv.len = (size_t)n * (p32 ? 4 : 8);
    PyObject *a = vec_to_bytearray(&out_off), *b = vec_to_bytearray(&inv);
    if (a && b) result = Py_BuildValue("(NNO)", a, b, wide_out ? Py_True : Py_False);
    else { Py_XDECREF(a); Py_XDECREF(b); }
done:
    if (have_o) PyBuffer_Release(&ob);
    if (have_p) PyBuffer_Release(&pb);
    free(out_off.p);
    free(inv.p);
    return result;
}

/* memcpy(dst, src, n) for ids, mostly 4 to 16 bytes: two word moves that overlap rather than
   a call (an id's bytes only: [dst, dst + n) is all that is written) */
static inline void copy_short(char *dst, const char *src, size_t n) {
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(&b, src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, src, 4);
        memcpy(&b, src + n - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + n - 4, &b, 4);
    } else {
        memcpy(dst, src, n);
    }
}

/*
 * scatter_docs(data, mapped, inverse, new_offsets, wide_out) -> doc bytes
 * The doc ids of a TREC text that parse_trec accepted, read again and written in a new row
 * order: the doc of row i (data lines in file order) goes to row inverse[i], whose place
 * new_offsets gives (see permute_offsets). Sorting parsed qrels this way never holds their
 * doc ids twice (a gather does: file order and sorted order, 2 × 1.3 GB at 100 M lines).
 * A mapped file's pages are released every 64 MB, as parse_trec does.
 */
static PyObject *scatter_docs(PyObject *self, PyObject *args) {
    Py_buffer buf, ib, ob;
    int mapped, wide_out;
    PyObject *inv_obj, *off_obj;
    if (!PyArg_ParseTuple(args, "y*pOOp", &buf, &mapped, &inv_obj, &off_obj, &wide_out))
        return NULL;
    int have_i = 0, have_o = 0;
    PyObject *result = NULL;
    vec out = {0};
    if (PyObject_GetBuffer(inv_obj, &ib, PyBUF_FORMAT | PyBUF_ND)) goto done;
    have_i = 1;
    if (PyObject_GetBuffer(off_obj, &ob, PyBUF_SIMPLE)) goto done;
    have_o = 1;
    const int i32 = ib.itemsize == 4;
    const Py_ssize_t n = ib.len / (i32 ? 4 : 8);
    if (ob.len / (wide_out ? 8 : 4) != n + 1) {
        PyErr_SetString(PyExc_ValueError, "scatter_docs: length mismatch");
        goto done;
    }
#define NEWOFF(k) (wide_out ? ((const int64_t *)ob.buf)[k] : (int64_t)((const int32_t *)ob.buf)[k])
    const int64_t total = NEWOFF(n);
    if (vec_reserve(&out, total ? (size_t)total : 1)) { PyErr_NoMemory(); goto done; }
    const char *s = buf.buf;
    const size_t len = (size_t)buf.len;
    const int doc_field = 2; /* in runs and qrels alike */
    size_t i = 0, released = 0;
    Py_ssize_t row = 0;
#if RAGMETER_SSE2
    /* as in parse_trec: the masks of 64 bytes, shifted past the lines taken from them, so
       that lines shorter than 64 bytes take 2 or more from one computation */
    uint64_t w_nl = 0, w_nonfield = 0;
#endif
    while (i < len) {
        if (mapped && i - released >= ((size_t)64 << 20)) {
            release_pages(s, released, i);
            released = i;
        }
        /* the fields of one line, as parse_trec splits them (it accepted this text) */
        int k = 0;
        const char *doc = NULL;
        size_t doc_n = 0;
#if RAGMETER_SSE2
        /* a line within the next 64 bytes: its doc field from bit masks, as parse_trec finds
           it, rather than a byte at a time (whose branches at each field's end cost most) */
        if (!w_nl && i + 64 <= len) {
            uint64_t bad; /* none: parse_trec accepted the text */
            line_masks(s + i, &w_nl, &bad, &w_nonfield);
        }
        if (w_nl) {
            const int e = __builtin_ctzll(w_nl);
            const uint64_t field = ~w_nonfield & ((1ULL << e) - 1);
            uint64_t st = field & ~(field << 1), en = field & ~(field >> 1);
            const char *line = s + i;
            i += (size_t)e + 1;
            if (e == 63) w_nl = w_nonfield = 0; /* a shift by 64 is undefined */
            else { w_nl >>= e + 1; w_nonfield >>= e + 1; }
            if (!st || line[__builtin_ctzll(st)] == '#') continue; /* blank, comment */
            for (k = 0; k < doc_field && st; k++) { st &= st - 1; en &= en - 1; }
            if (st) {
                const int a = __builtin_ctzll(st), b = __builtin_ctzll(en) + 1;
                doc = line + a;
                doc_n = (size_t)(b - a);
            }
            goto scatter;
        }
#endif
        for (;;) {
            while (i < len && CLS[(unsigned char)s[i]] == 1) i++;
            if (i >= len || CLS[(unsigned char)s[i]] == 2) break;
            size_t a = i;
            while (i < len && CLS[(unsigned char)s[i]] == 0) i++;
            if (k == 0 && s[a] == '#') { /* comment line */
                while (i < len && s[i] != '\n') i++;
                k = -1;
                break;
            }
            if (k == doc_field) { doc = s + a; doc_n = i - a; }
            k++;
        }
        if (i < len) i++; /* newline */
        if (k <= 0) continue;
#if RAGMETER_SSE2
    scatter:
#endif
        if (row >= n || !doc) {
            PyErr_SetString(PyExc_ValueError, "scatter_docs: the text has more rows than parsed");
            goto done;
        }
#define DEST(r) (i32 ? (int64_t)((const int32_t *)ib.buf)[r] : ((const int64_t *)ib.buf)[r])
        /* the new offsets of a row a few lines ahead: a new query's rows go elsewhere, and
           their offsets' cache line would otherwise be waited for */
        if (row + 16 < n) {
            const int64_t ahead = DEST(row + 16);
            if (ahead >= 0 && ahead < n)
                __builtin_prefetch(wide_out ? (const void *)((const int64_t *)ob.buf + ahead)
                                            : (const void *)((const int32_t *)ob.buf + ahead));
        }
        int64_t to = DEST(row);
#undef DEST
        if (to < 0 || to >= n || NEWOFF(to + 1) - NEWOFF(to) != (int64_t)doc_n) {
            PyErr_SetString(PyExc_ValueError, "scatter_docs: the text is not the one parsed");
            goto done;
        }
        copy_short(out.p + NEWOFF(to), doc, doc_n);
        row++;
    }
#undef NEWOFF
    if (row != n) {
        PyErr_SetString(PyExc_ValueError, "scatter_docs: the text has fewer rows than parsed");
        goto done;
    }
    out.len = (size_t)total;
    result = vec_to_bytearray(&out);
done:
    PyBuffer_Release(&buf);
    if (have_i) PyBuffer_Release(&ib);
    if (have_o) PyBuffer_Release(&ob);
    free(out.p);
    return result;
}

/*
 * strings_placed(offsets, data, wide, base, places: int64[n]) -> list[str]
 * The first n rows of a string array (UTF-8) as Python strings, row k at places[k] of the
 * list (a permutation of 0..n-1): Arrow's to_pylist and a gather by the inverse permutation,
 * at a fraction of to_pylist's cost per string. The rows are read in order (a gather's reads
 * in a jumbled order cost 4 times as much as the strings) and only the list's pointers are
 * written out of order.
 */
static PyObject *strings_placed(PyObject *self, PyObject *args) {
    PyObject *off, *data, *places_obj;
    int wide;
    Py_ssize_t base;
    if (!PyArg_ParseTuple(args, "OOinO", &off, &data, &wide, &base, &places_obj)) return NULL;
    strargs sa;
    Py_buffer pb;
    int have_p = 0;
    PyObject *list = NULL;
    if (get_strarr(off, data, wide, base, &sa)) goto done;
    if (PyObject_GetBuffer(places_obj, &pb, PyBUF_FORMAT | PyBUF_ND)) goto done;
    have_p = 1;
    if (pb.itemsize != 8) {
        PyErr_SetString(PyExc_ValueError, "strings_placed: int64 places");
        goto done;
    }
    const Py_ssize_t n = pb.len / 8;
    const int64_t *places = pb.buf;
    list = PyList_New(n); /* its items NULL until set */
    if (!list) goto done;
    for (Py_ssize_t k = 0; k < n; k++) {
        const int64_t to = places[k];
        if (to < 0 || to >= n || PyList_GET_ITEM(list, to)) {
            PyErr_SetString(PyExc_ValueError, "strings_placed: places are not a permutation");
            Py_CLEAR(list);
            goto done;
        }
        const char *p;
        size_t len;
        str_at(&sa.s, k, &p, &len);
        int ascii = 1;
        for (size_t j = 0; j < len; j++) ascii &= (unsigned char)p[j] < 0x80;
        PyObject *s;
        if (ascii) { /* the string an ASCII decoding makes, without the decoder's checks */
            s = PyUnicode_New((Py_ssize_t)len, 127);
            if (s && len) memcpy(PyUnicode_1BYTE_DATA(s), p, len);
        } else {
            s = PyUnicode_DecodeUTF8(p, (Py_ssize_t)len, "strict");
        }
        if (!s) { Py_CLEAR(list); goto done; }
        PyList_SET_ITEM(list, to, s);
    }
done:
    release_strarr(&sa);
    if (have_p) PyBuffer_Release(&pb);
    return list;
}

/* ---------------------------------------------------------------- qrels read in two passes */

/*
 * A qrels file that lists each query's judgments together (the usual layout) is read in two
 * passes over its text, each split in two parts that two threads read at once, the GIL
 * released: `qrels_stretches` finds each query's stretch of lines (where it starts, how many
 * judgments, how many doc bytes) and its id, and stores nothing per line; `qrels_place`, given
 * the queries' ranks, reads each stretch again, orders its lines by doc and writes doc ids,
 * offsets and grades straight into their final rows. Parsing every line into columns first,
 * then ordering them, moving the offsets and grades and reading the doc ids again
 * (scatter_docs) walked the rows four times and wrote 210 MB of columns at 10 M judgments
 * that were thrown away; a file of another layout or a line the parser declines
 * takes parse_trec's path (its columns ordered by `order`), a repeated judgment the
 * line-by-line one.
 */

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#define RAGMETER_THREADS 1
#else
#define RAGMETER_THREADS 0
#endif

/* parsed stretches of a mapped file leave the resident set this often: two threads read at
   once, and each holds up to this much of the file (64 MB, parse_trec's, would add 128 MB) */
#define LISTED_RELEASE ((size_t)8 << 20)

/* Run part(arg0) and part(arg1), at once where `two` (the second in a new thread), else one
   after the other (also where threads are not built or one cannot be started); the caller
   has released the GIL. */
static void run_two(void *(*part)(void *), void *arg0, void *arg1, int two) {
#if RAGMETER_THREADS
    pthread_t th;
    if (two && pthread_create(&th, NULL, part, arg1) == 0) {
        part(arg0);
        pthread_join(th, NULL);
        return;
    }
#else
    (void)two;
#endif
    part(arg0);
    part(arg1);
}

/* The position after the newline at or after `at` (or len): where a part of the text that
   starts on a line may begin. -1: the middle of a text of 1 MB or more, else len (one part:
   a thread costs more than it saves on a small file). */
static size_t split_point(const char *s, size_t len, Py_ssize_t at) {
    size_t pos;
    if (at < 0) {
        if (len < ((size_t)1 << 20)) return len;
        pos = len / 2;
    } else {
        pos = (size_t)at < len ? (size_t)at : len;
    }
    if (pos == 0) return 0;
    const char *nl = memchr(s + pos - 1, '\n', len - (pos - 1));
    return nl ? (size_t)(nl - s) + 1 : len;
}

enum { PART_OK = 0, PART_DECLINED = 1, PART_REPEATED = 2, PART_NOMEM = 3, PART_CHANGED = 4 };

/* one part's queries, in qrels_stretches */
typedef struct {
    const char *s;
    size_t len, lo, hi; /* the whole text, and this part's lines [lo, hi) */
    int mapped;
    int *stop; /* set by a part that declines: the other one stops too */
    vec qoffs, qdata; /* the queries' ids: int64 offsets from 0, bytes */
    vec stretch;      /* int64 triples: text position of the first line, lines, doc bytes */
    qtable qt;
    int byte_up, num_up; /* as in parse_trec: ids ascending in byte or (length, byte) order */
    int status;
} stretch_part;

static void *find_stretches(void *arg) {
    stretch_part *t = arg;
    const char *s = t->s;
    line_reader r = {.s = s + t->lo, .len = t->hi - t->lo, .i = 0};
    const char *prev_q = NULL;
    size_t prev_qn = 0, released = t->lo;
    int32_t nq = 0;
    int64_t *cur = NULL; /* the current stretch's triple */
    t->byte_up = t->num_up = 1;
    t->status = PART_OK;
    if (vec_reserve(&t->qoffs, 8)) goto nomem;
    { int64_t z = 0; memcpy(t->qoffs.p, &z, 8); t->qoffs.len = 8; }
    for (;;) {
        const size_t at = t->lo + r.i;
        if (t->mapped && at - released >= LISTED_RELEASE) {
            /* keep the current query id's bytes: prev_q points into them */
            const size_t keep = prev_q ? (size_t)(prev_q - s) : at;
            if (keep > released) {
                release_pages(s, released, keep);
                released = keep;
            }
        }
        const char *fp[4];
        size_t fn[4];
        const int got = next_fields(&r, fp, fn, 4, 0x05u); /* the query and doc ids */
        if (got == LINE_END) break;
        if (got == LINE_SKIP) continue;
        if (got == LINE_DECLINED) goto declined;
        if (!(prev_q && fn[0] == prev_qn && same_bytes_in(fp[0], prev_q, prev_qn, s + t->len))) {
            if (__atomic_load_n(t->stop, __ATOMIC_RELAXED)) goto declined;
            if (prev_q && !t->qt.slots) {
                const int c = cmp_bytes(fp[0], fn[0], prev_q, prev_qn);
                t->byte_up = t->byte_up && c > 0;
                t->num_up = t->num_up && (fn[0] > prev_qn || (fn[0] == prev_qn && c > 0));
                if (!t->byte_up && !t->num_up) {
                    size_t cap = 1024;
                    while (cap < 2 * ((size_t)nq + 1)) cap *= 2;
                    if (qtable_resize(&t->qt, cap, &t->qoffs, &t->qdata, nq)) goto nomem;
                }
            }
            size_t slot = 0;
            if (t->qt.slots) {
                slot = qtable_find(&t->qt, &t->qoffs, &t->qdata, fp[0], fn[0]);
                if (t->qt.slots[slot] >= 0) goto declined; /* a query seen before: not grouped */
            }
            if (nq >= INT32_MAX - 1) goto declined;
            if (vec_reserve(&t->qdata, fn[0]) || vec_reserve(&t->qoffs, 8) ||
                vec_reserve(&t->stretch, 24))
                goto nomem;
            memcpy(t->qdata.p + t->qdata.len, fp[0], fn[0]);
            t->qdata.len += fn[0];
            { int64_t o = (int64_t)t->qdata.len; memcpy(t->qoffs.p + t->qoffs.len, &o, 8); t->qoffs.len += 8; }
            cur = (int64_t *)(t->stretch.p + t->stretch.len);
            cur[0] = (int64_t)at;
            cur[1] = cur[2] = 0;
            t->stretch.len += 24;
            if (t->qt.slots) {
                t->qt.slots[slot] = nq;
                if ((size_t)(nq + 1) * 2 > t->qt.cap &&
                    qtable_resize(&t->qt, t->qt.cap * 2, &t->qoffs, &t->qdata, nq + 1))
                    goto nomem;
            }
            nq++;
            prev_q = fp[0];
            prev_qn = fn[0];
        }
        cur[1]++;
        cur[2] += (int64_t)fn[2];
    }
    goto done;
nomem:
    t->status = PART_NOMEM;
    __atomic_store_n(t->stop, 1, __ATOMIC_RELAXED);
    goto done;
declined:
    t->status = PART_DECLINED;
    __atomic_store_n(t->stop, 1, __ATOMIC_RELAXED);
done:
    if (t->mapped && t->hi > released) release_pages(s, released, t->hi);
    return NULL;
}

static void free_stretch_part(stretch_part *t) {
    free(t->qoffs.p); free(t->qdata.p); free(t->stretch.p); free(t->qt.slots);
}

/* Query `k` of part t's ids. */
static inline void part_qid(const stretch_part *t, int64_t k, const char **p, size_t *n) {
    const int64_t *o = (const int64_t *)t->qoffs.p;
    *p = t->qdata.p + o[k];
    *n = (size_t)(o[k + 1] - o[k]);
}

/* Part b's queries after part a's: a's last stretch goes on into b's first where they are one
   query's; PART_DECLINED where another query of b is one of a's (not grouped). */
static int join_parts(stretch_part *a, stretch_part *b) {
    const int64_t na = (int64_t)(a->stretch.len / 24), nb = (int64_t)(b->stretch.len / 24);
    int64_t from = 0;
    const char *p, *q;
    size_t pn, qn;
    if (na && nb) {
        part_qid(a, na - 1, &p, &pn);
        part_qid(b, 0, &q, &qn);
        if (pn == qn && memcmp(p, q, pn) == 0) { /* the split fell inside a query's stretch */
            int64_t *last = (int64_t *)a->stretch.p + 3 * (na - 1);
            const int64_t *first = (const int64_t *)b->stretch.p;
            last[1] += first[1];
            last[2] += first[2];
            from = 1;
        }
    }
    if (na && from < nb) {
        /* each part's ids ascending in one order, a's last before b's first in it: every id
           of b is new; else each of b's ids is looked up among a's */
        part_qid(a, na - 1, &p, &pn);
        part_qid(b, from, &q, &qn);
        const int c = cmp_bytes(q, qn, p, pn);
        const int up = (a->byte_up && b->byte_up && c > 0) ||
                       (a->num_up && b->num_up && (qn > pn || (qn == pn && c > 0)));
        if (!up) {
            if (!a->qt.slots) {
                size_t cap = 1024;
                while (cap < 2 * ((size_t)na + 1)) cap *= 2;
                if (qtable_resize(&a->qt, cap, &a->qoffs, &a->qdata, (int32_t)na))
                    return PART_NOMEM;
            }
            for (int64_t k = from; k < nb; k++) {
                part_qid(b, k, &q, &qn);
                if (a->qt.slots[qtable_find(&a->qt, &a->qoffs, &a->qdata, q, qn)] >= 0)
                    return PART_DECLINED;
            }
        }
    }
    if (na + (nb - from) >= INT32_MAX - 1) return PART_DECLINED;
    /* b's ids and stretches appended to a's */
    const int64_t *bo = (const int64_t *)b->qoffs.p;
    const size_t bytes = (size_t)(bo[nb] - bo[from]), shift = a->qdata.len;
    if (vec_reserve(&a->qdata, bytes + 1) || vec_reserve(&a->qoffs, (size_t)(nb - from) * 8) ||
        vec_reserve(&a->stretch, (size_t)(nb - from) * 24 + 1))
        return PART_NOMEM;
    if (bytes) memcpy(a->qdata.p + a->qdata.len, b->qdata.p + bo[from], bytes);
    a->qdata.len += bytes;
    for (int64_t k = from + 1; k <= nb; k++) {
        const int64_t o = bo[k] - bo[from] + (int64_t)shift;
        memcpy(a->qoffs.p + a->qoffs.len, &o, 8);
        a->qoffs.len += 8;
    }
    if (nb > from) memcpy(a->stretch.p + a->stretch.len, b->stretch.p + from * 24, (size_t)(nb - from) * 24);
    a->stretch.len += (size_t)(nb - from) * 24;
    return PART_OK;
}

/*
 * qrels_stretches(data, mapped, split_at=-1) -> None | (qid_offsets: int64[nq+1], qid_data,
 *     stretches: int64[3 nq])
 * The queries of a qrels text each on one stretch of lines, in order of first appearance: their
 * ids (as parse_trec's dictionary), and for each the text position of its first line, its
 * number of judgments and the total length of their doc ids. None where a query's lines are
 * not together, there is no judgment, or a line is one parse_trec declines (the caller takes
 * parse_trec's path, which decides). Grades are read by qrels_place. The text is read in two
 * parts, split at the line after byte `split_at` (-1: the middle of a text of 1 MB or more,
 * else one part), at once; a mapped file's parsed pages are released as in parse_trec.
 */
static PyObject *qrels_stretches(PyObject *self, PyObject *args) {
    Py_buffer buf;
    int mapped = 0;
    Py_ssize_t split_at = -1;
    if (!PyArg_ParseTuple(args, "y*|pn", &buf, &mapped, &split_at)) return NULL;
    const char *s = buf.buf;
    const size_t len = (size_t)buf.len;
    int stop = 0, status;
    stretch_part parts[2];
    memset(parts, 0, sizeof(parts));
    PyObject *result = NULL;
    Py_BEGIN_ALLOW_THREADS
    const size_t mid = split_point(s, len, split_at);
    for (int k = 0; k < 2; k++) {
        parts[k].s = s;
        parts[k].len = len;
        parts[k].lo = k ? mid : 0;
        parts[k].hi = k ? len : mid;
        parts[k].mapped = mapped;
        parts[k].stop = &stop;
    }
    run_two(find_stretches, &parts[0], &parts[1], mid > 0 && mid < len);
    status = parts[0].status != PART_OK ? parts[0].status : parts[1].status;
    if (status == PART_OK) status = join_parts(&parts[0], &parts[1]);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    if (status == PART_NOMEM) {
        PyErr_NoMemory();
    } else if (status != PART_OK || parts[0].stretch.len == 0) {
        result = Py_None;
        Py_INCREF(result);
    } else {
        PyObject *a = vec_to_bytearray(&parts[0].qoffs), *b = vec_to_bytearray(&parts[0].qdata),
                 *c = vec_to_bytearray(&parts[0].stretch);
        if (a && b && c) result = Py_BuildValue("(NNN)", a, b, c);
        else { Py_XDECREF(a); Py_XDECREF(b); Py_XDECREF(c); }
    }
    free_stretch_part(&parts[0]);
    free_stretch_part(&parts[1]);
    return result;
}

/* a judgment of the stretch being placed: its doc id's first 8 bytes (see doc_prefix), the
   doc id in the text, and its grade */
typedef struct {
    uint64_t prefix;
    const char *p;
    size_t n;
    int32_t grade;
} judgment;

/* doc_prefix of a doc id in the text, which ends at `end` */
static inline uint64_t text_prefix(const char *p, size_t n, const char *end) {
    uint64_t k = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (end - p >= 8) {
        memcpy(&k, p, 8);
        k = __builtin_bswap64(k);
        return n >= 8 ? k : n ? k & (~0ULL << (64 - 8 * n)) : 0; /* the first n bytes */
    }
#endif
    (void)end;
    for (size_t j = 0; j < 8; j++) k = (k << 8) | (j < n ? (unsigned char)p[j] : 0);
    return k;
}

static inline int judgment_before(const judgment *a, const judgment *b) {
    if (a->prefix != b->prefix) return a->prefix < b->prefix;
    return cmp_bytes(a->p, a->n, b->p, b->n) < 0;
}

DEFINE_MERGE_SORT(sort_judgments, judgment, judgment_before)

/* ready_pages of the first (half 0) or second half of each of three outputs */
typedef struct {
    char *p[3];
    size_t n[3];
    int half;
} ready_job;

static void *ready_half(void *arg) {
    const ready_job *j = arg;
    for (int k = 0; k < 3; k++)
        if (j->n[k] >= READY_BYTES)
            ready_pages(j->p[k], j->half ? j->n[k] / 2 : 0, j->half ? j->n[k] : j->n[k] / 2);
    return NULL;
}

/* one part's stretches, in qrels_place */
typedef struct {
    const char *s;
    size_t len, lo, hi;
    int mapped, wide;
    int *stop;
    const int64_t *stretch, *ranks, *row_at, *byte_at; /* row_at, byte_at: by rank */
    int64_t c0, c1; /* the part's stretches */
    void *offsets;  /* the outputs: doc offsets (int64 if wide), doc bytes, grades */
    char *docs;
    int32_t *grades;
    int status;
} place_part;

/* Write a stretch's judgments v[0:n], in doc order, at row `row` and doc byte `at`. */
static void place_judgments(const place_part *t, const judgment *v, const size_t *order,
                            size_t n, int64_t row, int64_t at) {
    for (size_t k = 0; k < n; k++) {
        const judgment *x = order ? &v[order[k]] : &v[k];
        if (t->wide) ((int64_t *)t->offsets)[row + (int64_t)k] = at;
        else ((int32_t *)t->offsets)[row + (int64_t)k] = (int32_t)at;
        copy_short(t->docs + at, x->p, x->n);
        t->grades[row + (int64_t)k] = x->grade;
        at += (int64_t)x->n;
    }
}

/* Order stretch c's judgments v[0:n] by doc and write them in its rows: PART_REPEATED where a
   doc repeats. */
static int finish_stretch(const place_part *t, int64_t c, judgment *v, judgment *tmp, size_t n) {
    const int64_t rank = t->ranks[c], row = t->row_at[rank], at = t->byte_at[rank];
    if (n <= RANKED_MAX) {
        /* each judgment's place from how many prefixes are below its own, without a branch
           per comparison (an insertion sort's compares go either way at random: their
           mispredictions were most of its time), where no two prefixes are equal (then the
           places are n distinct ones: fewer where two are equal); the prefixes in an array of
           their own for a tight loop */
        uint64_t p[RANKED_MAX];
        size_t order[RANKED_MAX];
        uint32_t taken = 0;
        for (size_t k = 0; k < n; k++) p[k] = v[k].prefix;
        for (size_t k = 0; k < n; k++) {
            size_t below = 0;
            for (size_t j = 0; j < n; j++) below += p[j] < p[k];
            order[below] = k;
            taken |= 1u << below;
        }
        if (taken == (1u << n) - 1) {
            place_judgments(t, v, order, n, row, at);
            return PART_OK;
        }
    }
    sort_judgments(v, tmp, n);
    for (size_t k = 1; k < n; k++)
        if (v[k].prefix == v[k - 1].prefix && v[k].n == v[k - 1].n &&
            memcmp(v[k].p, v[k - 1].p, v[k].n) == 0)
            return PART_REPEATED;
    place_judgments(t, v, NULL, n, row, at);
    return PART_OK;
}

static void *place_stretches(void *arg) {
    place_part *t = arg;
    const char *s = t->s, *end = s + t->len;
    line_reader r = {.s = s + t->lo, .len = t->hi - t->lo, .i = 0};
    size_t released = t->lo, cap = 0, got_n = 0;
    judgment *v = NULL, *tmp = NULL;
    int64_t c = t->c0, bytes = 0;
    t->status = PART_OK;
    while (c < t->c1) {
        const size_t at = t->lo + r.i;
        if (t->mapped && at - released >= LISTED_RELEASE) {
            release_pages(s, released, at);
            released = at;
        }
        const char *fp[4];
        size_t fn[4];
        const int got = next_fields(&r, fp, fn, 4, 0x0cu); /* the doc id and grade */
        if (got == LINE_SKIP) continue;
        if (got != LINE_FIELDS) { t->status = PART_CHANGED; break; }
        int64_t g;
        if (parse_grade(fp[3], fn[3], &g)) { t->status = PART_DECLINED; break; }
        const int64_t *st = t->stretch + 3 * c;
        bytes += (int64_t)fn[2];
        if (bytes > st[2]) { t->status = PART_CHANGED; break; } /* not the text qrels_stretches read */
        if (got_n == cap) {
            const size_t want = cap ? 2 * cap : 64;
            judgment *nv = realloc(v, want * sizeof(judgment));
            if (!nv) { t->status = PART_NOMEM; break; }
            v = nv;
            free(tmp);
            tmp = malloc((want / 2 + 1) * sizeof(judgment));
            if (!tmp) { t->status = PART_NOMEM; break; }
            cap = want;
        }
        v[got_n].prefix = text_prefix(fp[2], fn[2], end);
        v[got_n].p = fp[2];
        v[got_n].n = fn[2];
        v[got_n].grade = (int32_t)g; /* parse_grade keeps it within ±(2**31 - 1) */
        if ((int64_t)++got_n < st[1]) continue;
        if (bytes != st[2]) { t->status = PART_CHANGED; break; }
        t->status = finish_stretch(t, c, v, tmp, got_n);
        if (t->status != PART_OK) break;
        if (__atomic_load_n(t->stop, __ATOMIC_RELAXED)) break;
        got_n = 0;
        bytes = 0;
        c++;
    }
    if (t->status != PART_OK) __atomic_store_n(t->stop, 1, __ATOMIC_RELAXED);
    if (t->mapped && t->hi > released) release_pages(s, released, t->hi);
    free(v);
    free(tmp);
    return NULL;
}

/*
 * qrels_place(data, mapped, stretches, ranks: int64[nq], wide_at=2**31-1, split_at=-1) ->
 *     None | 1 | (query offsets: bytearray int64[nq+1], doc offsets: int32[n+1] (int64 when
 *     wide), doc data, grades: bytearray int32[n], wide: bool)
 * The judgments of the stretches qrels_stretches found, read again and written in their
 * final rows: queries by rank, docs in byte order within a query (as `order` orders
 * parse_trec's columns). Doc offsets are int64 where the doc bytes pass wide_at (parse_trec's
 * rule). None where a grade is one parse_trec declines; 1 where a (query, doc) repeats (the
 * Python path reports it). The stretches are read in two parts, split at the first stretch
 * that starts at or after the line after byte `split_at` (as in qrels_stretches), at once.
 */
static PyObject *qrels_place(PyObject *self, PyObject *args) {
    Py_buffer buf, sb, rb;
    int mapped;
    PyObject *st_obj, *ranks_obj;
    Py_ssize_t wide_at = INT32_MAX, split_at = -1;
    if (!PyArg_ParseTuple(args, "y*pOO|nn", &buf, &mapped, &st_obj, &ranks_obj, &wide_at,
                          &split_at))
        return NULL;
    if (wide_at < 0 || wide_at > INT32_MAX) wide_at = INT32_MAX;
    int have_s = 0, have_r = 0, stop = 0, status = PART_OK;
    PyObject *result = NULL, *qoffs_obj = NULL, *grades_obj = NULL;
    int64_t *byte_at = NULL;
    vec offs = {0}, docs = {0};
    if (PyObject_GetBuffer(st_obj, &sb, PyBUF_SIMPLE)) goto done;
    have_s = 1;
    if (PyObject_GetBuffer(ranks_obj, &rb, PyBUF_FORMAT | PyBUF_ND)) goto done;
    have_r = 1;
    const Py_ssize_t nq = sb.len / 24;
    if (rb.itemsize != 8 || rb.len / 8 != nq || nq == 0) {
        PyErr_SetString(PyExc_ValueError, "qrels_place: int64 ranks, one per stretch");
        goto done;
    }
    const int64_t *stretch = sb.buf, *ranks = rb.buf;
    const char *s = buf.buf;
    const size_t len = (size_t)buf.len;
    /* the queries' first rows and doc bytes by rank */
    char *qbuf;
    qoffs_obj = new_bytearray((nq + 1) * 8, &qbuf);
    byte_at = calloc((size_t)nq + 1, sizeof(int64_t));
    if (!qoffs_obj || !byte_at) { if (qoffs_obj) PyErr_NoMemory(); goto done; }
    int64_t *row_at = (int64_t *)qbuf;
    memset(row_at, 0, ((size_t)nq + 1) * 8);
    for (Py_ssize_t c = 0; c < nq; c++) {
        const int64_t r = ranks[c];
        /* the parts' text ranges come from the starts: ascending, within the text */
        if (r < 0 || r >= nq || row_at[r + 1] || stretch[3 * c + 1] <= 0 ||
            stretch[3 * c + 2] < 0 || stretch[3 * c] < 0 || (size_t)stretch[3 * c] >= len ||
            (c > 0 && stretch[3 * c] <= stretch[3 * c - 3])) {
            PyErr_SetString(PyExc_ValueError, "qrels_place: ranks are not a permutation, or "
                            "stretches not qrels_stretches' of this text");
            goto done;
        }
        row_at[r + 1] = stretch[3 * c + 1];
        byte_at[r + 1] = stretch[3 * c + 2];
    }
    for (Py_ssize_t q = 0; q < nq; q++) {
        row_at[q + 1] += row_at[q];
        byte_at[q + 1] += byte_at[q];
    }
    const int64_t n = row_at[nq], total = byte_at[nq];
    const int wide = total > (int64_t)wide_at;
    grades_obj = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)n * 4);
    if (!grades_obj) goto done;
    char *gbuf = PyByteArray_AS_STRING(grades_obj);
    if (vec_reserve(&offs, (size_t)(n + 1) * (wide ? 8 : 4)) ||
        vec_reserve(&docs, total ? (size_t)total : 1)) {
        PyErr_NoMemory();
        goto done;
    }
    place_part parts[2];
    Py_BEGIN_ALLOW_THREADS
    {
        /* every page of the outputs is written, in no order: made ready first (ready_pages),
           half by each thread */
        ready_job jobs[2];
        for (int k = 0; k < 2; k++)
            jobs[k] = (ready_job){{gbuf, offs.p, docs.p},
                                  {(size_t)n * 4, (size_t)(n + 1) * (wide ? 8 : 4), (size_t)total},
                                  k};
        run_two(ready_half, &jobs[0], &jobs[1], (size_t)total >= READY_BYTES);
    }
    const size_t mid = split_point(s, len, split_at);
    int64_t cmid = 0; /* the first stretch of the second part */
    while (cmid < nq && (size_t)stretch[3 * cmid] < mid) cmid++;
    for (int k = 0; k < 2; k++) {
        parts[k] = (place_part){.s = s, .len = len, .mapped = mapped, .wide = wide, .stop = &stop,
                                .stretch = stretch, .ranks = ranks, .row_at = row_at,
                                .byte_at = byte_at, .offsets = offs.p, .docs = docs.p,
                                .grades = (int32_t *)gbuf};
        parts[k].c0 = k ? cmid : 0;
        parts[k].c1 = k ? nq : cmid;
        parts[k].lo = parts[k].c0 < nq ? (size_t)stretch[3 * parts[k].c0] : len;
        parts[k].hi = parts[k].c1 < nq ? (size_t)stretch[3 * parts[k].c1] : len;
    }
    run_two(place_stretches, &parts[0], &parts[1], cmid > 0 && cmid < nq);
    Py_END_ALLOW_THREADS
    for (int k = 0; k < 2; k++)
        if (parts[k].c0 < parts[k].c1 && parts[k].status != PART_OK && status == PART_OK)
            status = parts[k].status;
    if (status == PART_NOMEM) { PyErr_NoMemory(); goto done; }
    if (status == PART_CHANGED) {
        PyErr_SetString(PyExc_ValueError, "qrels_place: the text is not the one qrels_stretches read");
        goto done;
    }
    if (status != PART_OK) {
        result = status == PART_REPEATED ? PyLong_FromLong(1) : Py_None;
        if (status != PART_REPEATED) Py_INCREF(result);
        goto done;
    }
    if (wide) ((int64_t *)offs.p)[n] = total;
    else ((int32_t *)offs.p)[n] = (int32_t)total;
    offs.len = (size_t)(n + 1) * (wide ? 8 : 4);
    docs.len = (size_t)total;
    {
        PyObject *a = vec_to_bytearray(&offs), *b = vec_to_bytearray(&docs);
        if (a && b)
            result = Py_BuildValue("(ONNOO)", qoffs_obj, a, b, grades_obj, wide ? Py_True : Py_False);
        else { Py_XDECREF(a); Py_XDECREF(b); }
    }
done:
    PyBuffer_Release(&buf);
    if (have_s) PyBuffer_Release(&sb);
    if (have_r) PyBuffer_Release(&rb);
    Py_XDECREF(qoffs_obj);
    Py_XDECREF(grades_obj);
    free(byte_at);
    free(offs.p);
    free(docs.p);
    return result;
}

/*
 * fixed_width(ids: list) -> None | False | (keys: bytearray, width)
 * The query index's keys (evaluation.blocks._fixed_width): ASCII ids NUL-padded to the
 * longest one's width, one after the other. False where that function gives None for ASCII
 * ids (an id holds a NUL, the ids are not strictly ascending in byte order, or the width is
 * more than 4 times their bytes plus 8 per id); None where an item is not an ASCII str (the
 * Python function decides). Reads the strings' bytes in place, without numpy's per-item
 * conversions (0.13 s at a million ids).
 */
static PyObject *fixed_width(PyObject *self, PyObject *args) {
    PyObject *ids;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &ids)) return NULL;
    const Py_ssize_t n = PyList_GET_SIZE(ids);
    size_t total = 0, width = 1;
    const char *prev = NULL;
    size_t prev_n = 0;
    int ascending = 1, nul = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *s = PyList_GET_ITEM(ids, k);
        if (!PyUnicode_Check(s)) Py_RETURN_NONE;
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(s)) return NULL; /* a legacy string made canonical (3.11) */
#endif
        if (!PyUnicode_IS_ASCII(s)) Py_RETURN_NONE;
        const char *p = (const char *)PyUnicode_DATA(s);
        const size_t len = (size_t)PyUnicode_GET_LENGTH(s);
        total += len;
        if (len > width) width = len;
        if (!nul && memchr(p, 0, len)) nul = 1;
        if (prev && ascending && cmp_bytes(prev, prev_n, p, len) >= 0) ascending = 0;
        prev = p;
        prev_n = len;
    }
    if (nul || !ascending || width * (size_t)n > 4 * total + 8 * (size_t)n) Py_RETURN_FALSE;
    char *out = NULL;
    PyObject *keys = new_bytearray((Py_ssize_t)(width * (size_t)n), &out);
    if (!keys) return NULL;
    memset(out, 0, width * (size_t)n);
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *s = PyList_GET_ITEM(ids, k);
        memcpy(out + (size_t)k * width, PyUnicode_DATA(s), (size_t)PyUnicode_GET_LENGTH(s));
    }
    return Py_BuildValue("(Nn)", keys, (Py_ssize_t)width);
}

/* ---------------------------------------------------------------- join */

/*
 * join(offsets int64[nq+1], run_rows int64[total], label_offsets int64[nq+1], label_rows
 *      int64[L], grades int32 (qrels rows), run docs (off, data, wide, base), qrels docs
 *      (off, data, wide, base)) -> bytearray int64[total]: the qrels row judging each item, or -1
 */
static PyObject *join(PyObject *self, PyObject *args) {
    PyObject *o_off, *o_rows, *o_loff, *o_lrows, *r_off, *r_data, *l_off, *l_data;
    int r_wide, l_wide;
    Py_ssize_t r_base, l_base;
    if (!PyArg_ParseTuple(args, "OOOOOOinOOin", &o_off, &o_rows, &o_loff, &o_lrows,
                          &r_off, &r_data, &r_wide, &r_base, &l_off, &l_data, &l_wide, &l_base))
        return NULL;
    Py_buffer b[4];
    int have = 0;
    strargs rs, ls;
    memset(&rs, 0, sizeof(rs));
    memset(&ls, 0, sizeof(ls));
    PyObject *out = NULL, *result = NULL;
    int64_t *table = NULL;
    PyObject *objs[4] = {o_off, o_rows, o_loff, o_lrows};
    for (; have < 4; have++)
        if (PyObject_GetBuffer(objs[have], &b[have], PyBUF_SIMPLE)) goto done;
    if (get_strarr(r_off, r_data, r_wide, r_base, &rs)) goto done;
    if (get_strarr(l_off, l_data, l_wide, l_base, &ls)) goto done;
    const int64_t *offs = b[0].buf, *rows = b[1].buf, *loffs = b[2].buf, *lrows = b[3].buf;
    Py_ssize_t nq = b[0].len / 8 - 1, total = b[1].len / 8;
    if (b[2].len != b[0].len) { PyErr_SetString(PyExc_ValueError, "length mismatch"); goto done; }
    char *gbuf = NULL;
    out = new_bytearray(total * 8, &gbuf);
    if (!out) goto done;
    int64_t *g = (int64_t *)gbuf;
    for (Py_ssize_t i = 0; i < total; i++) g[i] = -1;
    size_t maxl = 0;
    for (Py_ssize_t q = 0; q < nq; q++)
        if ((size_t)(loffs[q + 1] - loffs[q]) > maxl) maxl = (size_t)(loffs[q + 1] - loffs[q]);
    size_t tcap = 16;
    while (tcap < 2 * maxl) tcap *= 2;
    table = malloc(tcap * sizeof(int64_t));
    if (!table) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t q = 0; q < nq; q++) {
        int64_t la = loffs[q], lb = loffs[q + 1];
        if (la == lb || offs[q] == offs[q + 1]) continue;
        size_t cap = 16;
        while (cap < 2 * (size_t)(lb - la)) cap *= 2;
        for (size_t j = 0; j < cap; j++) table[j] = -1;
        for (int64_t j = la; j < lb; j++) {
            const char *p;
            size_t ln;
            str_at(&ls.s, lrows[j], &p, &ln);
            size_t slot = hash_bytes(p, ln) & (cap - 1);
            while (table[slot] >= 0) slot = (slot + 1) & (cap - 1);
            table[slot] = lrows[j];
        }
        for (int64_t i = offs[q]; i < offs[q + 1]; i++) {
            const char *p;
            size_t ln;
            str_at(&rs.s, rows[i], &p, &ln);
            size_t slot = hash_bytes(p, ln) & (cap - 1);
            while (table[slot] >= 0) {
                const char *o;
                size_t on;
                str_at(&ls.s, table[slot], &o, &on);
                if (on == ln && memcmp(o, p, ln) == 0) { g[i] = table[slot]; break; }
                slot = (slot + 1) & (cap - 1);
            }
        }
    }
    result = out;
    out = NULL;
done:
    for (int k = 0; k < have; k++) PyBuffer_Release(&b[k]);
    release_strarr(&rs);
    release_strarr(&ls);
    free(table);
    Py_XDECREF(out);
    return result;
}

/* ---------------------------------------------------------------- coverage greedies */

/* bitsets of `words` uint64 words over a query's sub-questions */
static inline int popcount64(uint64_t x) { return __builtin_popcountll(x); }

/*
 * Fill masks[k*words ..] with the questions row (first_row + k) rates >= tau, for k < n_rows;
 * OR them into `any` (the query's answerable questions). Returns 0, or -1 on a width mismatch.
 */
static int row_masks(const int64_t *roffs, const int8_t *ratings, int64_t first_row,
                     int64_t n_rows, int64_t width, int64_t words, int tau, uint64_t *masks,
                     uint64_t *any) {
    memset(masks, 0, (size_t)(n_rows * words) * 8);
    memset(any, 0, (size_t)words * 8);
    for (int64_t k = 0; k < n_rows; k++) {
        int64_t a = roffs[first_row + k], b = roffs[first_row + k + 1];
        if (b - a > width) return -1;
        uint64_t *m = masks + k * words;
        for (int64_t c = a; c < b; c++)
            if (ratings[c] >= tau) m[(c - a) >> 6] |= (uint64_t)1 << ((c - a) & 63);
        for (int64_t w = 0; w < words; w++) any[w] |= m[w];
    }
    return 0;
}

typedef struct {
    Py_buffer b[4];
    int have;
} bufs4;

static int get_bufs(bufs4 *g, PyObject **objs, int n) {
    g->have = 0;
    for (; g->have < n; g->have++)
        if (PyObject_GetBuffer(objs[g->have], &g->b[g->have], PyBUF_SIMPLE)) return -1;
    return 0;
}

static void release_bufs(bufs4 *g) {
    for (int k = 0; k < g->have; k++) PyBuffer_Release(&g->b[k]);
}

/*
 * required(offsets int64[nq+1], widths int64[nq], rating_offsets int64[rows+1], ratings int8,
 *          tau) -> (offsets bytearray int64[nq+1], rows bytearray int64[m])
 * The greedy required subset P* of each query (SPEC §4), rows in selection order: while an
 * answerable question is uncovered, take the first row (input order) answering the most
 * uncovered questions. Twin of Judgments._greedy_required (tau >= 1).
 */
static PyObject *required(PyObject *self, PyObject *args) {
    PyObject *objs[4];
    int tau;
    if (!PyArg_ParseTuple(args, "OOOOi", &objs[0], &objs[1], &objs[2], &objs[3], &tau))
        return NULL;
    bufs4 g;
    PyObject *rows_obj = NULL, *offs_obj = NULL, *result = NULL;
    uint64_t *masks = NULL, *unc = NULL;
    int64_t *picked = NULL;
    if (get_bufs(&g, objs, 4)) goto done;
    const int64_t *offs = g.b[0].buf, *widths = g.b[1].buf, *roffs = g.b[2].buf;
    const int8_t *ratings = g.b[3].buf;
    Py_ssize_t nq = g.b[0].len / 8 - 1;
    if (nq < 0 || g.b[1].len / 8 != nq || g.b[2].len / 8 != offs[nq] + 1) {
        PyErr_SetString(PyExc_ValueError, "length mismatch");
        goto done;
    }
    int64_t max_rows = 0, max_words = 1;
    for (Py_ssize_t q = 0; q < nq; q++) {
        if (offs[q + 1] - offs[q] > max_rows) max_rows = offs[q + 1] - offs[q];
        if ((widths[q] + 63) / 64 > max_words) max_words = (widths[q] + 63) / 64;
    }
    masks = malloc((size_t)(max_rows * max_words + 1) * 8);
    unc = malloc((size_t)max_words * 8);
    picked = malloc((size_t)(offs[nq] + 1) * 8);
    char *obuf = NULL;
    offs_obj = new_bytearray((nq + 1) * 8, &obuf);
    if (!masks || !unc || !picked) { PyErr_NoMemory(); goto done; }
    if (!offs_obj) goto done;
    int64_t *out_offs = (int64_t *)obuf;
    int64_t m = 0;
    out_offs[0] = 0;
    for (Py_ssize_t q = 0; q < nq; q++) {
        int64_t first = offs[q], n = offs[q + 1] - offs[q], words = (widths[q] + 63) / 64;
        if (words < 1) words = 1;
        if (row_masks(roffs, ratings, first, n, widths[q], words, tau, masks, unc)) {
            PyErr_SetString(PyExc_ValueError, "row wider than its query");
            goto done;
        }
        for (;;) {
            int64_t best = -1, best_count = 0;
            for (int64_t k = 0; k < n; k++) {
                const uint64_t *mk = masks + k * words;
                int64_t c = 0;
                for (int64_t w = 0; w < words; w++) c += popcount64(mk[w] & unc[w]);
                if (c > best_count) { best_count = c; best = k; }
            }
            if (best < 0) break;
            picked[m++] = first + best;
            const uint64_t *mb = masks + best * words;
            for (int64_t w = 0; w < words; w++) unc[w] &= ~mb[w];
        }
        out_offs[q + 1] = m;
    }
    char *rbuf = NULL;
    rows_obj = new_bytearray(m * 8, &rbuf);
    if (!rows_obj) goto done;
    if (m) memcpy(rbuf, picked, (size_t)m * 8);
    result = Py_BuildValue("(OO)", offs_obj, rows_obj);
done:
    release_bufs(&g);
    free(masks);
    free(unc);
    free(picked);
    Py_XDECREF(rows_obj);
    Py_XDECREF(offs_obj);
    return result;
}

/*
 * answerable(offsets int64[nq+1], widths int64[nq], rating_offsets int64[rows+1], ratings int8,
 *            tau) -> bytearray bool[sum(widths)]: per global question, whether some row of its
 * query rates it >= tau. Twin of Judgments.answerable's bincount over at_least.
 */
static PyObject *answerable(PyObject *self, PyObject *args) {
    PyObject *objs[4];
    int tau;
    if (!PyArg_ParseTuple(args, "OOOOi", &objs[0], &objs[1], &objs[2], &objs[3], &tau))
        return NULL;
    bufs4 g;
    PyObject *out = NULL, *result = NULL;
    if (get_bufs(&g, objs, 4)) goto done;
    const int64_t *offs = g.b[0].buf, *widths = g.b[1].buf, *roffs = g.b[2].buf;
    const int8_t *ratings = g.b[3].buf;
    Py_ssize_t nq = g.b[0].len / 8 - 1;
    if (nq < 0 || g.b[1].len / 8 != nq || g.b[2].len / 8 != offs[nq] + 1) {
        PyErr_SetString(PyExc_ValueError, "length mismatch");
        goto done;
    }
    int64_t total = 0;
    for (Py_ssize_t q = 0; q < nq; q++) total += widths[q];
    char *flags = NULL;
    out = new_bytearray(total, &flags);
    if (!out) goto done;
    memset(flags, 0, (size_t)total);
    int64_t base = 0;
    for (Py_ssize_t q = 0; q < nq; q++) {
        for (int64_t row = offs[q]; row < offs[q + 1]; row++) {
            int64_t a = roffs[row], b = roffs[row + 1];
            if (b - a > widths[q]) {
                PyErr_SetString(PyExc_ValueError, "row wider than its query");
                goto done;
            }
            for (int64_t c = a; c < b; c++) flags[base + (c - a)] |= ratings[c] >= tau;
        }
        base += widths[q];
    }
    result = out;
    out = NULL;
done:
    release_bufs(&g);
    Py_XDECREF(out);
    return result;
}

static void sort_docs_merge(const strarr *s, int64_t *v, int64_t *tmp, int64_t n);

/* merge sort of rows by doc id descending (byte order), equal ids in ascending row order */
static inline int doc_after(const strarr *s, int64_t a, int64_t b) {
    const char *pa, *pb;
    size_t na, nb;
    str_at(s, a, &pa, &na);
    str_at(s, b, &pb, &nb);
    int c = cmp_bytes(pa, na, pb, nb);
    return c > 0 || (c == 0 && a < b);
}

static void sort_docs_desc(const strarr *s, int64_t *v, int64_t *tmp, int64_t n) {
    if (n < 2) return;
    /* rows are often in strictly ascending doc order already: then reversing sorts them */
    int64_t i = 1;
    while (i < n && doc_after(s, v[i], v[i - 1]) && !doc_after(s, v[i - 1], v[i])) i++;
    if (i == n) {
        for (int64_t a = 0, b = n - 1; a < b; a++, b--) {
            int64_t t = v[a];
            v[a] = v[b];
            v[b] = t;
        }
        return;
    }
    sort_docs_merge(s, v, tmp, n);
}

static void sort_docs_merge(const strarr *s, int64_t *v, int64_t *tmp, int64_t n) {
    if (n < 2) return;
    if (n <= 16) {
        for (int64_t i = 1; i < n; i++) {
            int64_t x = v[i], j = i;
            while (j > 0 && doc_after(s, x, v[j - 1])) { v[j] = v[j - 1]; j--; }
            v[j] = x;
        }
        return;
    }
    int64_t h = n / 2;
    sort_docs_merge(s, v, tmp, h);
    sort_docs_merge(s, v + h, tmp, n - h);
    memcpy(tmp, v, (size_t)h * 8);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n) v[k++] = doc_after(s, v[j], tmp[i]) ? v[j++] : tmp[i++];
    while (i < h) v[k++] = tmp[i++];
}

/*
 * ideal_alpha_dcg(offsets int64[nq+1], widths int64[nq], rating_offsets int64[rows+1],
 *                 ratings int8, tau, decay, discounts float64[depth], doc offsets, doc data,
 *                 wide, base) -> bytearray float64[nq]
 * ndeval's greedy ideal per query over the rows answering something: at each rank the row of
 * largest gain sum_i J(d,i) w_i (summed in question order from 0.0; w_i = decay^c_i by
 * repeated multiplication), ties to the larger doc id; stops at depth or when no gain is left.
 * Gain / discounts[rank] is added in rank order. Twin of Judgments._greedy_ideal.
 */
static PyObject *ideal_alpha_dcg(PyObject *self, PyObject *args) {
    PyObject *objs[4], *disc_obj, *d_off, *d_data;
    int tau, wide;
    double decay;
    Py_ssize_t base;
    if (!PyArg_ParseTuple(args, "OOOOidOOOin", &objs[0], &objs[1], &objs[2], &objs[3], &tau,
                          &decay, &disc_obj, &d_off, &d_data, &wide, &base))
        return NULL;
    bufs4 g;
    Py_buffer db;
    int have_d = 0;
    strargs sa;
    memset(&sa, 0, sizeof(sa));
    PyObject *out_obj = NULL, *result = NULL;
    uint64_t *masks = NULL, *any = NULL, *hit = NULL;
    int64_t *slots = NULL, *tmp = NULL, *slot_k = NULL;
    double *weight = NULL, *gain = NULL;
    if (get_bufs(&g, objs, 4)) goto done;
    if (PyObject_GetBuffer(disc_obj, &db, PyBUF_SIMPLE)) goto done;
    have_d = 1;
    if (get_strarr(d_off, d_data, wide, base, &sa)) goto done;
    const int64_t *offs = g.b[0].buf, *widths = g.b[1].buf, *roffs = g.b[2].buf;
    const int8_t *ratings = g.b[3].buf;
    const double *disc = db.buf;
    Py_ssize_t depth = db.len / 8;
    Py_ssize_t nq = g.b[0].len / 8 - 1;
    if (nq < 0 || g.b[1].len / 8 != nq || g.b[2].len / 8 != offs[nq] + 1) {
        PyErr_SetString(PyExc_ValueError, "length mismatch");
        goto done;
    }
    int64_t max_rows = 0, max_words = 1, max_width = 1;
    for (Py_ssize_t q = 0; q < nq; q++) {
        if (offs[q + 1] - offs[q] > max_rows) max_rows = offs[q + 1] - offs[q];
        if ((widths[q] + 63) / 64 > max_words) max_words = (widths[q] + 63) / 64;
        if (widths[q] > max_width) max_width = widths[q];
    }
    masks = malloc((size_t)(max_rows * max_words + 1) * 8);
    any = malloc((size_t)max_words * 8);
    hit = malloc((size_t)max_words * 8);
    slots = malloc((size_t)(max_rows + 1) * 8);
    slot_k = malloc((size_t)(max_rows + 1) * 8);
    tmp = malloc((size_t)(max_rows + 1) * 8);
    gain = malloc((size_t)(max_rows + 1) * sizeof(double));
    weight = malloc((size_t)max_width * sizeof(double));
    char *obuf = NULL;
    out_obj = new_bytearray(nq * 8, &obuf);
    if (!masks || !any || !hit || !slots || !slot_k || !tmp || !gain || !weight) {
        PyErr_NoMemory();
        goto done;
    }
    if (!out_obj) goto done;
    double *out = (double *)obuf;
    for (Py_ssize_t q = 0; q < nq; q++) {
        int64_t first = offs[q], n = offs[q + 1] - offs[q], words = (widths[q] + 63) / 64;
        if (words < 1) words = 1;
        out[q] = 0.0;
        if (row_masks(roffs, ratings, first, n, widths[q], words, tau, masks, any)) {
            PyErr_SetString(PyExc_ValueError, "row wider than its query");
            goto done;
        }
        /* slots: the rows answering something, by doc id descending */
        int64_t ns = 0;
        for (int64_t k = 0; k < n; k++) {
            const uint64_t *mk = masks + k * words;
            int nz = 0;
            for (int64_t w = 0; w < words; w++) nz |= mk[w] != 0;
            if (nz) slots[ns++] = first + k;
        }
        if (!ns) continue;
        sort_docs_desc(&sa.s, slots, tmp, ns);
        for (int64_t s = 0; s < ns; s++) {
            slot_k[s] = slots[s] - first;
            gain[s] = (double)0.0;
        }
        for (int64_t i = 0; i < widths[q]; i++) weight[i] = 1.0;
        /* initial gains: 0.0 + 1.0 + ... in question order */
        for (int64_t s = 0; s < ns; s++) {
            const uint64_t *mk = masks + slot_k[s] * words;
            double sum = 0.0;
            for (int64_t w = 0; w < words; w++)
                for (uint64_t x = mk[w]; x; x &= x - 1)
                    sum += weight[w * 64 + __builtin_ctzll(x)];
            gain[s] = sum;
        }
        double total = 0.0;
        if (words == 1) {
            /* one word per slot: the common case, with the masks side by side */
            uint64_t *sm = (uint64_t *)tmp; /* free again after the sort */
            for (int64_t s = 0; s < ns; s++) sm[s] = masks[slot_k[s]];
            for (Py_ssize_t rank = 0; rank < depth; rank++) {
                int64_t best = 0;
                double top = gain[0];
                for (int64_t s = 1; s < ns; s++)
                    if (gain[s] > top) { top = gain[s]; best = s; }
                if (!(top > 0)) break;
                total += top / disc[rank];
                gain[best] = -1.0;
                uint64_t hb = sm[best];
                for (uint64_t x = hb; x; x &= x - 1) weight[__builtin_ctzll(x)] *= decay;
                for (int64_t s = 0; s < ns; s++) {
                    if (!(sm[s] & hb) || gain[s] < 0) continue;
                    double sum = 0.0;
                    for (uint64_t x = sm[s]; x; x &= x - 1) sum += weight[__builtin_ctzll(x)];
                    gain[s] = sum;
                }
            }
            out[q] = total;
            continue;
        }
        for (Py_ssize_t rank = 0; rank < depth; rank++) {
            int64_t best = 0;
            for (int64_t s = 1; s < ns; s++)
                if (gain[s] > gain[best]) best = s;
            double top = gain[best];
            if (!(top > 0)) break;
            total += top / disc[rank];
            gain[best] = -1.0;
            const uint64_t *mb = masks + slot_k[best] * words;
            for (int64_t w = 0; w < words; w++) {
                hit[w] = mb[w];
                for (uint64_t x = mb[w]; x; x &= x - 1) weight[w * 64 + __builtin_ctzll(x)] *= decay;
            }
            for (int64_t s = 0; s < ns; s++) {
                if (gain[s] < 0) continue;
                const uint64_t *mk = masks + slot_k[s] * words;
                int touched = 0;
                for (int64_t w = 0; w < words; w++) touched |= (mk[w] & hit[w]) != 0;
                if (!touched) continue;
                double sum = 0.0;
                for (int64_t w = 0; w < words; w++)
                    for (uint64_t x = mk[w]; x; x &= x - 1)
                        sum += weight[w * 64 + __builtin_ctzll(x)];
                gain[s] = sum;
            }
        }
        out[q] = total;
    }
    result = out_obj;
    out_obj = NULL;
done:
    release_bufs(&g);
    if (have_d) PyBuffer_Release(&db);
    release_strarr(&sa);
    free(masks);
    free(any);
    free(hit);
    free(slots);
    free(slot_k);
    free(tmp);
    free(gain);
    free(weight);
    Py_XDECREF(out_obj);
    return result;
}

/* ---------------------------------------------------------------- corpus look-up, tokens */

/*
 * doc_index(offsets, data, wide, base, n) -> bytearray int64[cap]: an open-addressing table
 * (cap a power of two >= 2n) of the rows of a string array, -1 = empty; a repeated string
 * keeps its first row (as Arrow's index_in).
 */
static PyObject *doc_index(PyObject *self, PyObject *args) {
    PyObject *off, *data;
    int wide;
    Py_ssize_t base, n;
    if (!PyArg_ParseTuple(args, "OOinn", &off, &data, &wide, &base, &n)) return NULL;
    strargs sa;
    PyObject *out = NULL, *result = NULL;
    if (get_strarr(off, data, wide, base, &sa)) goto done;
    size_t cap = 16;
    while (cap < 2 * (size_t)n) cap *= 2;
    char *tbuf = NULL;
    out = new_bytearray((Py_ssize_t)(cap * 8), &tbuf);
    if (!out) goto done;
    int64_t *table = (int64_t *)tbuf;
    for (size_t j = 0; j < cap; j++) table[j] = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *p;
        size_t ln;
        str_at(&sa.s, i, &p, &ln);
        size_t slot = hash_bytes(p, ln) & (cap - 1);
        int dup = 0;
        while (table[slot] >= 0) {
            const char *o;
            size_t on;
            str_at(&sa.s, table[slot], &o, &on);
            if (on == ln && memcmp(o, p, ln) == 0) { dup = 1; break; }
            slot = (slot + 1) & (cap - 1);
        }
        if (!dup) table[slot] = i;
    }
    result = out;
    out = NULL;
done:
    release_strarr(&sa);
    Py_XDECREF(out);
    return result;
}

/*
 * doc_lookup(table, value offsets, value data, wide, base, query offsets, query data, wide,
 *            base, n) -> bytearray int64[n]: the row of each query string in the table's
 * array (see doc_index), -1 where absent.
 */
static PyObject *doc_lookup(PyObject *self, PyObject *args) {
    PyObject *tab, *v_off, *v_data, *q_off, *q_data;
    int v_wide, q_wide;
    Py_ssize_t v_base, q_base, n;
    if (!PyArg_ParseTuple(args, "OOOinOOinn", &tab, &v_off, &v_data, &v_wide, &v_base, &q_off,
                          &q_data, &q_wide, &q_base, &n))
        return NULL;
    Py_buffer tb;
    int have_t = 0;
    strargs vs, qs;
    memset(&vs, 0, sizeof(vs));
    memset(&qs, 0, sizeof(qs));
    PyObject *out = NULL, *result = NULL;
    if (PyObject_GetBuffer(tab, &tb, PyBUF_SIMPLE)) goto done;
    have_t = 1;
    if (get_strarr(v_off, v_data, v_wide, v_base, &vs)) goto done;
    if (get_strarr(q_off, q_data, q_wide, q_base, &qs)) goto done;
    const int64_t *table = tb.buf;
    size_t cap = (size_t)tb.len / 8;
    if (cap == 0 || (cap & (cap - 1))) {
        PyErr_SetString(PyExc_ValueError, "bad table");
        goto done;
    }
    char *obuf = NULL;
    out = new_bytearray(n * 8, &obuf);
    if (!out) goto done;
    int64_t *pos = (int64_t *)obuf;
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *p;
        size_t ln;
        str_at(&qs.s, i, &p, &ln);
        size_t slot = hash_bytes(p, ln) & (cap - 1);
        pos[i] = -1;
        while (table[slot] >= 0) {
            const char *o;
            size_t on;
            str_at(&vs.s, table[slot], &o, &on);
            if (on == ln && memcmp(o, p, ln) == 0) { pos[i] = table[slot]; break; }
            slot = (slot + 1) & (cap - 1);
        }
    }
    result = out;
    out = NULL;
done:
    if (have_t) PyBuffer_Release(&tb);
    release_strarr(&vs);
    release_strarr(&qs);
    Py_XDECREF(out);
    return result;
}

/*
 * ascii_tokens(offsets, data, wide, base, n) -> bytearray int64[n] | None: whitespace tokens
 * of each text (str.split() white space among ASCII bytes); None if any byte is >= 0x80.
 */
static PyObject *ascii_tokens(PyObject *self, PyObject *args) {
    PyObject *off, *data;
    int wide;
    Py_ssize_t base, n;
    if (!PyArg_ParseTuple(args, "OOinn", &off, &data, &wide, &base, &n)) return NULL;
    static unsigned char space[256];
    space[9] = space[10] = space[11] = space[12] = space[13] = 1;
    space[28] = space[29] = space[30] = space[31] = space[32] = 1;
    strargs sa;
    PyObject *out = NULL, *result = NULL;
    if (get_strarr(off, data, wide, base, &sa)) goto done;
    char *obuf = NULL;
    out = new_bytearray(n * 8, &obuf);
    if (!out) goto done;
    int64_t *counts = (int64_t *)obuf;
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *p;
        size_t ln;
        str_at(&sa.s, i, &p, &ln);
        int64_t c = 0;
        int prev_space = 1;
        for (size_t k = 0; k < ln; k++) {
            unsigned char b = (unsigned char)p[k];
            if (b >= 0x80) {
                result = Py_None;
                Py_INCREF(result);
                goto done;
            }
            c += prev_space & !space[b];
            prev_space = space[b];
        }
        counts[i] = c;
    }
    result = out;
    out = NULL;
done:
    release_strarr(&sa);
    Py_XDECREF(out);
    return result;
}

/* ---------------------------------------------------------------- module */

/* ---------------------------------------------------------------- sequential sums */

/*
 * segment_sums(values float64[n], starts int64[m], ends int64[m]) -> bytearray float64[m]
 * Per segment, values[start] + values[start + 1] + ... + values[end - 1] added left to right
 * (trec_eval's order); 0.0 where end <= start. Twin of ragmeter.core.sums.segment_sums.
 */
static PyObject *segment_sums(PyObject *self, PyObject *args) {
    PyObject *objs[3];
    if (!PyArg_ParseTuple(args, "OOO", &objs[0], &objs[1], &objs[2])) return NULL;
    bufs4 g;
    PyObject *out = NULL, *result = NULL;
    if (get_bufs(&g, objs, 3)) goto done;
    const double *values = g.b[0].buf;
    const int64_t *starts = g.b[1].buf, *ends = g.b[2].buf;
    Py_ssize_t n = g.b[0].len / 8, m = g.b[1].len / 8;
    if (g.b[2].len / 8 != m) {
        PyErr_SetString(PyExc_ValueError, "length mismatch");
        goto done;
    }
    char *data = NULL;
    out = new_bytearray(m * 8, &data);
    if (!out) goto done;
    double *sums = (double *)data;
    for (Py_ssize_t s = 0; s < m; s++) {
        int64_t a = starts[s], b = ends[s];
        if (b > a && (a < 0 || b > n)) {
            PyErr_SetString(PyExc_ValueError, "segment out of range");
            goto done;
        }
        double acc = 0.0;
        for (int64_t i = a; i < b; i++) acc += values[i];
        sums[s] = acc;
    }
    result = out;
    out = NULL;
done:
    release_bufs(&g);
    Py_XDECREF(out);
    return result;
}

/*
 * segment_cumsum(values float64[n], offsets int64[m+1]) -> bytearray float64[n]
 * Running sum within each CSR segment, inclusive, added left to right; restarts at 0.0 at
 * every segment. Twin of ragmeter.core.sums.segment_cumsum.
 */
static PyObject *segment_cumsum(PyObject *self, PyObject *args) {
    PyObject *objs[2];
    if (!PyArg_ParseTuple(args, "OO", &objs[0], &objs[1])) return NULL;
    bufs4 g;
    PyObject *out = NULL, *result = NULL;
    if (get_bufs(&g, objs, 2)) goto done;
    const double *values = g.b[0].buf;
    const int64_t *offs = g.b[1].buf;
    Py_ssize_t n = g.b[0].len / 8, m = g.b[1].len / 8 - 1;
    if (m < 0 || offs[0] != 0 || offs[m] != n) {
        PyErr_SetString(PyExc_ValueError, "offsets do not cover the values");
        goto done;
    }
    char *data = NULL;
    out = new_bytearray(n * 8, &data);
    if (!out) goto done;
    double *cum = (double *)data;
    for (Py_ssize_t s = 0; s < m; s++) {
        int64_t a = offs[s], b = offs[s + 1];
        if (a > b || b > n) {
            PyErr_SetString(PyExc_ValueError, "offsets not ascending");
            goto done;
        }
        double acc = 0.0;
        for (int64_t i = a; i < b; i++) {
            acc += values[i];
            cum[i] = acc;
        }
    }
    result = out;
    out = NULL;
done:
    release_bufs(&g);
    Py_XDECREF(out);
    return result;
}

/* ---------------------------------------------------------------- a block of a run, aligned */

typedef struct {
    int64_t pos;
    int32_t code;
} pos_code;

static int pos_code_cmp(const void *a, const void *b) {
    int64_t x = ((const pos_code *)a)->pos, y = ((const pos_code *)b)->pos;
    return (x > y) - (x < y);
}

/* The position of query id (p, n) among `nkeys` NUL-padded ids of `width` bytes in ascending
   byte order, or -1: an id longer than `width` is none of them (ids hold no NUL: parse_trec
   declines NUL bytes, QueryIndex keeps keys only for NUL-free ids). */
static int64_t key_position(const char *keys, Py_ssize_t width, Py_ssize_t nkeys, const char *p,
                            size_t n, char *padded) {
    if (n > (size_t)width || nkeys == 0) return -1;
    memcpy(padded, p, n);
    memset(padded + n, 0, (size_t)width - n);
    Py_ssize_t lo = 0, hi = nkeys;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (memcmp(keys + mid * width, padded, (size_t)width) < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo < nkeys && memcmp(keys + lo * width, padded, (size_t)width) == 0) return lo;
    return -1;
}

/* a judgment of one query: sorted by grade descending, then row (align's stable lexsort) */
typedef struct {
    int32_t grade;
    int64_t row;
} graded_row;

static int graded_row_cmp(const void *a, const void *b) {
    const graded_row *x = a, *y = b;
    if (x->grade != y->grade) return x->grade < y->grade ? 1 : -1;
    return (x->row > y->row) - (x->row < y->row);
}

/*
 * block_align(codes int32[n], qid_offsets int64[nq+1], qid_data, scores float64[n], run docs
 *     (off, data, wide), keys (NUL-padded ids, ascending), width, qrels offsets int64[NQ+1],
 *     qrels docs (off, data, wide, base), qrels grades int32[rows], depth (-1: none))
 * -> (qpos int64[nq], offsets int64[m+1], rows int32[total], grades int32[total],
 *     item_label int64[total], label_offsets int64[m+1], label_rows int64[L],
 *     label_grades int32[L], dupes)   (arrays as bytearrays)
 * One pass over a parsed block of a run (parse_trec's columns) doing what Run._from_encoded
 * (order with dedupe) and align (the judged queries, the join, the judgments in grade order)
 * do, without gathering doc ids: qpos is each query code's position among the qrels' queries
 * (-1: not judged); the m judged queries come in ascending position; each one's rows (line
 * indices) in the run's order (score desc, doc desc, line asc), later rows repeating a doc
 * dropped, cut at `depth`; grades the judging qrels row's grade (the first such row; INT32_MIN:
 * none), item_label the index of that judgment among label_rows (-1: none); label_rows the
 * qrels rows of each judged query by grade descending, then row. dupes counts the dropped
 * repeats of every query, judged or not (the reading warning's count). Blocks have fewer than
 * 2**31 lines (rows are int32).
 */
static PyObject *block_align(PyObject *self, PyObject *args) {
    PyObject *codes_obj, *qoff_obj, *qdata_obj, *scores_obj, *r_off, *r_data, *keys_obj,
        *loffs_obj, *l_off, *l_data, *lgrades_obj;
    int r_wide, l_wide;
    Py_ssize_t width, l_base, depth;
    if (!PyArg_ParseTuple(args, "OOOOOOiOnOOOinOn", &codes_obj, &qoff_obj, &qdata_obj,
                          &scores_obj, &r_off, &r_data, &r_wide, &keys_obj, &width, &loffs_obj,
                          &l_off, &l_data, &l_wide, &l_base, &lgrades_obj, &depth))
        return NULL;
    Py_buffer b[7];
    int have = 0;
    strargs rs, ls;
    memset(&rs, 0, sizeof(rs));
    memset(&ls, 0, sizeof(ls));
    PyObject *result = NULL, *qpos_obj = NULL, *offs_obj = NULL, *loffs_out = NULL;
    vec rows = {0}, grades = {0}, labels = {0}, lrows = {0}, lgr = {0};
    int64_t *first = NULL, *grouped = NULL, *tmp = NULL, *table = NULL, *ltable = NULL,
            *rank_of = NULL;
    graded_row *sorted_labels = NULL;
    pos_code *judged = NULL;
    char *padded = NULL;
    PyObject *objs[7] = {codes_obj, qoff_obj, qdata_obj, scores_obj, keys_obj, loffs_obj,
                         lgrades_obj};
    for (; have < 7; have++)
        if (PyObject_GetBuffer(objs[have], &b[have], PyBUF_SIMPLE)) goto done;
    if (get_strarr(r_off, r_data, r_wide, 0, &rs)) goto done;
    if (get_strarr(l_off, l_data, l_wide, l_base, &ls)) goto done;
    const int32_t *codes = b[0].buf;
    const int64_t *qoff = b[1].buf;
    const char *qdata = b[2].buf;
    const double *scores = b[3].buf;
    const char *keys = b[4].buf;
    const int64_t *loffs = b[5].buf;
    const int32_t *lgrades = b[6].buf;
    const Py_ssize_t nkeys = width > 0 ? b[4].len / width : 0;
    const Py_ssize_t n = b[0].len / 4, nq = b[1].len / 8 - 1;
    if (b[3].len / 8 != n || nq < 0 || width <= 0 || b[5].len / 8 != nkeys + 1 ||
        n >= INT32_MAX || (nkeys && b[6].len / 4 < loffs[nkeys])) {
        PyErr_SetString(PyExc_ValueError, "block_align: length mismatch");
        goto done;
    }
    char *qbuf = NULL, *obuf = NULL, *lobuf = NULL;
    qpos_obj = new_bytearray(nq * 8, &qbuf);
    if (!qpos_obj) goto done;
    int64_t *qpos = (int64_t *)qbuf;
    padded = malloc((size_t)width + 1);
    first = malloc((size_t)(nq + 1) * 8);
    grouped = malloc((size_t)(n ? n : 1) * 8);
    judged = malloc((size_t)(nq ? nq : 1) * sizeof(pos_code));
    if (!padded || !first || !grouped || !judged) { PyErr_NoMemory(); goto done; }
    Py_ssize_t m = 0;
    for (Py_ssize_t q = 0; q < nq; q++) {
        qpos[q] = key_position(keys, width, nkeys, qdata + qoff[q],
                               (size_t)(qoff[q + 1] - qoff[q]), padded);
        if (qpos[q] >= 0) { judged[m].pos = qpos[q]; judged[m].code = (int32_t)q; m++; }
    }
    qsort(judged, (size_t)m, sizeof(pos_code), pos_code_cmp);
    /* rows grouped by code, in line order (a counting sort) */
    memset(first, 0, (size_t)(nq + 1) * 8);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (codes[i] < 0 || codes[i] >= nq) {
            PyErr_SetString(PyExc_ValueError, "block_align: code out of range");
            goto done;
        }
        first[codes[i] + 1]++;
    }
    size_t maxlen = 0, maxl = 0, n_labels = 0;
    for (Py_ssize_t q = 0; q < nq; q++) {
        if ((size_t)first[q + 1] > maxlen) maxlen = (size_t)first[q + 1];
        first[q + 1] += first[q];
    }
    {
        int64_t *at = malloc((size_t)(nq + 1) * 8);
        if (!at) { PyErr_NoMemory(); goto done; }
        memcpy(at, first, (size_t)(nq + 1) * 8);
        for (Py_ssize_t i = 0; i < n; i++) grouped[at[codes[i]]++] = i;
        free(at);
    }
    for (Py_ssize_t j = 0; j < m; j++) {
        size_t nl = (size_t)(loffs[judged[j].pos + 1] - loffs[judged[j].pos]);
        if (nl > maxl) maxl = nl;
        n_labels += nl;
    }
    size_t tcap = 16, lcap = 16;
    while (tcap < 2 * maxlen) tcap *= 2;
    while (lcap < 2 * maxl) lcap *= 2;
    tmp = malloc((maxlen / 2 + 1) * sizeof(int64_t));
    table = malloc(tcap * sizeof(int64_t));
    ltable = malloc(lcap * sizeof(int64_t));
    rank_of = malloc((maxl + 1) * sizeof(int64_t));
    sorted_labels = malloc((maxl + 1) * sizeof(graded_row));
    offs_obj = new_bytearray((m + 1) * 8, &obuf);
    loffs_out = new_bytearray((m + 1) * 8, &lobuf);
    const size_t items = (size_t)(n ? n : 1);
    if (!tmp || !table || !ltable || !rank_of || !sorted_labels || !offs_obj || !loffs_out ||
        vec_reserve(&rows, items * 4) || vec_reserve(&grades, items * 4) ||
        vec_reserve(&labels, items * 8) || vec_reserve(&lrows, (n_labels + 1) * 8) ||
        vec_reserve(&lgr, (n_labels + 1) * 4)) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    int64_t *offs = (int64_t *)obuf, *label_offs = (int64_t *)lobuf;
    int32_t *out_rows = (int32_t *)rows.p, *out_grades = (int32_t *)grades.p;
    int64_t *out_label = (int64_t *)labels.p, *out_lrows = (int64_t *)lrows.p;
    int32_t *out_lgr = (int32_t *)lgr.p;
    order_ctx ctx = {scores, &rs.s};
    int64_t w = 0, dupes = 0, L = 0;
    /* the judged queries in position order */
    for (Py_ssize_t k = 0; k < m; k++) {
        const int32_t code = judged[k].code;
        int64_t *v = grouped + first[code];
        size_t len = (size_t)(first[code + 1] - first[code]);
        int sorted = 1;
        for (size_t i = 1; i < len; i++)
            if (!before(&ctx, v[i - 1], v[i])) { sorted = 0; break; }
        if (!sorted) merge_sort(&ctx, v, tmp, len);
        offs[k] = w;
        label_offs[k] = L;
        /* the query's judgments: in grade order, and a table of them by doc */
        const int64_t la = loffs[judged[k].pos], lbnd = loffs[judged[k].pos + 1];
        const size_t nl = (size_t)(lbnd - la);
        for (size_t j = 0; j < nl; j++) {
            sorted_labels[j].grade = lgrades[la + (int64_t)j];
            sorted_labels[j].row = la + (int64_t)j;
        }
        if (nl > 1) qsort(sorted_labels, nl, sizeof(graded_row), graded_row_cmp);
        for (size_t j = 0; j < nl; j++) {
            out_lrows[L + (int64_t)j] = sorted_labels[j].row;
            out_lgr[L + (int64_t)j] = sorted_labels[j].grade;
            rank_of[sorted_labels[j].row - la] = L + (int64_t)j;
        }
        L += (int64_t)nl;
        size_t lc = 16;
        while (lc < 2 * nl) lc *= 2;
        for (size_t j = 0; j < lc; j++) ltable[j] = -1;
        for (int64_t r = la; r < lbnd; r++) {
            const char *p;
            size_t ln;
            str_at(&ls.s, r, &p, &ln);
            size_t slot = hash_words(p, ln) & (lc - 1);
            while (ltable[slot] >= 0) slot = (slot + 1) & (lc - 1);
            ltable[slot] = r;
        }
        size_t cap = 16;
        while (cap < 2 * len) cap *= 2;
        for (size_t j = 0; j < cap; j++) table[j] = -1;
        int64_t kept = 0;
        for (size_t i = 0; i < len; i++) {
            int64_t row = v[i];
            const char *p;
            size_t ln;
            str_at(&rs.s, row, &p, &ln);
            uint64_t h = hash_words(p, ln);
            size_t slot = h & (cap - 1);
            int dup = 0;
            while (table[slot] >= 0) {
                const char *o;
                size_t on;
                str_at(&rs.s, table[slot], &o, &on);
                if (on == ln && memcmp(o, p, ln) == 0) { dup = 1; break; }
                slot = (slot + 1) & (cap - 1);
            }
            if (dup) { dupes++; continue; }
            table[slot] = row;
            if (depth >= 0 && kept >= depth) continue; /* beyond depth: only repeats counted */
            int64_t hit = -1;
            size_t ls_slot = h & (lc - 1);
            while (ltable[ls_slot] >= 0) {
                const char *o;
                size_t on;
                str_at(&ls.s, ltable[ls_slot], &o, &on);
                if (on == ln && memcmp(o, p, ln) == 0) { hit = ltable[ls_slot]; break; }
                ls_slot = (ls_slot + 1) & (lc - 1);
            }
            out_rows[w] = (int32_t)row;
            out_grades[w] = hit >= 0 ? lgrades[hit] : INT32_MIN;
            out_label[w] = hit >= 0 ? rank_of[hit - la] : -1;
            w++;
            kept++;
        }
    }
    offs[m] = w;
    label_offs[m] = L;
    /* repeats of the queries not judged (counted, not ordered: the count is the same) */
    for (Py_ssize_t q = 0; q < nq; q++) {
        if (qpos[q] >= 0) continue;
        int64_t *v = grouped + first[q];
        size_t len = (size_t)(first[q + 1] - first[q]);
        size_t cap = 16;
        while (cap < 2 * len) cap *= 2;
        for (size_t j = 0; j < cap; j++) table[j] = -1;
        for (size_t i = 0; i < len; i++) {
            const char *p;
            size_t ln;
            str_at(&rs.s, v[i], &p, &ln);
            size_t slot = hash_words(p, ln) & (cap - 1);
            int dup = 0;
            while (table[slot] >= 0) {
                const char *o;
                size_t on;
                str_at(&rs.s, table[slot], &o, &on);
                if (on == ln && memcmp(o, p, ln) == 0) { dup = 1; break; }
                slot = (slot + 1) & (cap - 1);
            }
            if (dup) dupes++;
            else table[slot] = v[i];
        }
    }
    rows.len = grades.len = (size_t)w * 4;
    labels.len = (size_t)w * 8;
    lrows.len = (size_t)L * 8;
    lgr.len = (size_t)L * 4;
    {
        PyObject *a = vec_to_bytearray(&rows), *c = vec_to_bytearray(&grades),
                 *d = vec_to_bytearray(&labels), *e = vec_to_bytearray(&lrows),
                 *f = vec_to_bytearray(&lgr);
        if (a && c && d && e && f)
            result = Py_BuildValue("(OONNNONNL)", qpos_obj, offs_obj, a, c, d, loffs_out, e, f,
                                   (long long)dupes);
        else { Py_XDECREF(a); Py_XDECREF(c); Py_XDECREF(d); Py_XDECREF(e); Py_XDECREF(f); }
    }
done:
    for (int k = 0; k < have; k++) PyBuffer_Release(&b[k]);
    release_strarr(&rs);
    release_strarr(&ls);
    free(first); free(grouped); free(tmp); free(table); free(ltable); free(judged); free(padded);
    free(rank_of); free(sorted_labels);
    free(rows.p); free(grades.p); free(labels.p); free(lrows.p); free(lgr.p);
    Py_XDECREF(qpos_obj);
    Py_XDECREF(offs_obj);
    Py_XDECREF(loffs_out);
    return result;
}

/* ---------------------------------------------------------------- one-pass block scan */

/* a line of the query being read: its score, doc id (in the text), line index and doc hash */
typedef struct {
    double score;
    const char *doc;
    uint32_t doc_len;
    int32_t line;
    uint64_t hash;
} scan_item;

/* the run's order: score descending, doc id descending (byte order), line ascending */
static inline int item_before(const scan_item *a, const scan_item *b) {
    if (a->score != b->score) return a->score > b->score;
    int k = cmp_bytes(a->doc, a->doc_len, b->doc, b->doc_len);
    if (k) return k > 0;
    return a->line < b->line;
}

DEFINE_MERGE_SORT(merge_items, scan_item, item_before)

/* A query's lines in the run's order. Runs are mostly written in that order already, save
   tied scores: an insertion sort costs a comparison a line and a move per line out of place;
   one that finds too many out of place merge-sorts (the order is total: the same result). */
static void sort_items(scan_item *v, scan_item *tmp, size_t n) {
    size_t moves = 0;
    for (size_t i = 1; i < n; i++) {
        if (!item_before(&v[i], &v[i - 1])) continue;
        scan_item x = v[i];
        size_t j = i;
        do { v[j] = v[j - 1]; j--; moves++; } while (j > 0 && item_before(&x, &v[j - 1]));
        v[j] = x;
        if (moves > 4 * n + 64) { merge_items(v, tmp, n); return; }
    }
}

/* Whether key k (NUL-padded to width) is the id (p, n). */
static inline int key_is(const char *k, Py_ssize_t width, const char *p, size_t n) {
    return n <= (size_t)width && memcmp(k, p, n) == 0 && (n == (size_t)width || k[n] == 0);
}

/* The length of a NUL-padded key. */
static inline size_t key_length(const char *k, Py_ssize_t width) {
    size_t n = (size_t)width;
    while (n > 0 && k[n - 1] == 0) n--;
    return n;
}

/*
 * key_slots(keys, width) -> bytearray int32[cap]: an open-addressing table of the positions of
 * the NUL-padded keys (QueryIndex's, ascending), hashed by their bytes, cap a power of two at
 * least twice their number (-1: empty). Built once before the workers fork, it finds a block's
 * query in one or two probes where a bisection of a million keys takes twenty, most of them
 * cache misses: a run's queries are seldom in the keys' byte order (q9 then q10).
 */
static PyObject *key_slots(PyObject *self, PyObject *args) {
    Py_buffer kb;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "y*n", &kb, &width)) return NULL;
    PyObject *out = NULL;
    if (width <= 0) {
        PyErr_SetString(PyExc_ValueError, "key_slots: width must be positive");
        goto done;
    }
    const Py_ssize_t nkeys = kb.len / width;
    if (nkeys >= INT32_MAX / 2) {
        PyErr_SetString(PyExc_ValueError, "key_slots: too many keys");
        goto done;
    }
    size_t cap = 16;
    while (cap < 2 * (size_t)nkeys) cap *= 2;
    char *buf;
    out = new_bytearray((Py_ssize_t)(cap * 4), &buf);
    if (!out) goto done;
    int32_t *slots = (int32_t *)buf;
    memset(slots, 0xff, cap * 4);
    const char *keys = kb.buf;
    /* no Python object is touched: another thread may run meanwhile (stream.py finds the
       run file's cuts while this is built) */
    Py_BEGIN_ALLOW_THREADS
    /* the slots of 16 keys hashed and prefetched before they are written, in key order (the
       same table as one at a time): a million keys' slots are 8 MB of random writes, most of
       them cache misses waited for one by one */
    enum { BATCH = 16 };
    size_t first[BATCH];
    for (Py_ssize_t k0 = 0; k0 < nkeys; k0 += BATCH) {
        const Py_ssize_t n = nkeys - k0 < BATCH ? nkeys - k0 : BATCH;
        for (Py_ssize_t j = 0; j < n; j++) {
            const char *p = keys + (k0 + j) * width;
            first[j] = hash_words(p, key_length(p, width)) & (cap - 1);
            __builtin_prefetch(&slots[first[j]], 1);
        }
        for (Py_ssize_t j = 0; j < n; j++) {
            size_t slot = first[j];
            while (slots[slot] >= 0) slot = (slot + 1) & (cap - 1);
            slots[slot] = (int32_t)(k0 + j);
        }
    }
    Py_END_ALLOW_THREADS
done:
    PyBuffer_Release(&kb);
    return out;
}

/* The position of query id (p, n) among the keys through their key_slots table, or -1. */
static inline int64_t slot_position(const char *keys, Py_ssize_t width, const int32_t *slots,
                                    size_t mask, const char *p, size_t n) {
    if (n > (size_t)width) return -1;
    size_t slot = hash_words(p, n) & mask;
    while (slots[slot] >= 0) {
        if (key_is(keys + (Py_ssize_t)slots[slot] * width, width, p, n)) return slots[slot];
        slot = (slot + 1) & mask;
    }
    return -1;
}

/* a judged query of the block: its position among the qrels', and how many items and labels it
   wrote (the outputs hold them in the block's order) */
typedef struct {
    int64_t pos, nw, nl;
} scan_query;

typedef struct {
    uint64_t hash;
    int64_t row;
} hashed_row;

typedef struct {
    /* inputs */
    const char *keys;
    Py_ssize_t width, nkeys;
    const int32_t *slots;
    size_t slot_mask;
    const int64_t *loffs;
    const strarr *ls;
    const int32_t *lgrades;
    Py_ssize_t depth;
    /* scratch */
    scan_item *tmp;
    size_t tmp_cap;
    int32_t *table; /* the query's items by doc: stamp + item (below stamp: empty) */
    size_t table_cap;
    int32_t stamp;
    hashed_row *ltable; /* the query's judgments by doc: hash and stamped row (below) */
    size_t ltable_cap;
    int64_t lstamp; /* the next visit's first stamp in ltable */
    graded_row *sorted_labels;
    int64_t *rank_of;
    size_t sorted_cap, rank_cap;
    /* outputs */
    vec qpos, rows, grades, item_label, lrows, lgr, queries, unjudged;
    int64_t w, L, dupes;
} scan_state;

static int grow_scratch(void **p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * size);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* Scratch tables that are emptied without a write: a slot holds a value of the query that
   wrote it, and a slot whose value is not one of the current query's counts as empty (a
   memset of each query's tables was a tenth of a line's instructions). Grown tables start
   all -1 (empty for every query). */
static int grow_table(void **p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return 0;
    const size_t old = *cap;
    if (grow_scratch(p, cap, need, size)) return -1;
    memset((char *)*p + old * size, 0xff, (*cap - old) * size);
    return 0;
}

/* The item table for n items, at least 8n slots, an eighth full at most (a probe mostly finds
   its slot empty at once: a branch the processor predicts, where a half-full table's probes
   are a coin toss of 15-cycle mispredictions); its mask and the query's stamp. Slot values
   are stamp + item, and the next query's stamp is past them: every slot is empty for it. */
static int next_item_table(scan_state *st, size_t n, size_t *mask, int32_t *stamp) {
    size_t c = 64;
    while (c < 8 * n) c *= 2;
    if (grow_table((void **)&st->table, &st->table_cap, c, sizeof(int32_t))) return -1;
    *mask = c - 1;
    *stamp = st->stamp;
    st->stamp += (int32_t)n; /* the items of a block < 2**31 (its lines: < 2 GiB / 12) */
    return 0;
}

/* Whether item v[i] repeats a doc of the items already in the table (else it is added). */
static inline int repeats(const scan_item *v, int32_t i, int32_t *table, size_t mask,
                          int32_t stamp) {
    size_t slot = v[i].hash & mask;
    while (table[slot] >= stamp) {
        const scan_item *o = &v[table[slot] - stamp];
        if (o->hash == v[i].hash && o->doc_len == v[i].doc_len &&
            memcmp(o->doc, v[i].doc, v[i].doc_len) == 0)
            return 1;
        slot = (slot + 1) & mask;
    }
    table[slot] = stamp + i;
    return 0;
}

/* The query `code` (id p, n) whose lines are v[0:n_items], at position `pos` among the qrels'
   (-2: not looked up yet): as block_align does for a query. */
CLONED static int scan_finish(scan_state *st, int32_t code, const char *p, size_t n, scan_item *v,
                       size_t n_items, int64_t pos) {
    if (pos == -2) pos = slot_position(st->keys, st->width, st->slots, st->slot_mask, p, n);
    if (vec_reserve(&st->qpos, 8)) return -1;
    memcpy(st->qpos.p + st->qpos.len, &pos, 8);
    st->qpos.len += 8;
    size_t mask;
    int32_t stamp;
    if (next_item_table(st, n_items, &mask, &stamp)) return -1;
    if (pos < 0) { /* not judged: only its repeated docs are counted */
        if (vec_reserve(&st->unjudged, 4)) return -1;
        memcpy(st->unjudged.p + st->unjudged.len, &code, 4);
        st->unjudged.len += 4;
        for (size_t i = 0; i < n_items; i++)
            st->dupes += repeats(v, (int32_t)i, st->table, mask, stamp);
        return 0;
    }
    if (grow_scratch((void **)&st->tmp, &st->tmp_cap, n_items / 2 + 1, sizeof(scan_item)))
        return -1;
    sort_items(v, st->tmp, n_items);
    /* the query's judgments: in grade order (align's stable lexsort), and a table by doc */
    const int64_t la = st->loffs[pos], lb = st->loffs[pos + 1];
    const size_t nl = (size_t)(lb - la);
    if (grow_scratch((void **)&st->sorted_labels, &st->sorted_cap, nl + 1, sizeof(graded_row)) ||
        grow_scratch((void **)&st->rank_of, &st->rank_cap, nl + 1, sizeof(int64_t)))
        return -1;
    for (size_t j = 0; j < nl; j++) {
        graded_row x = {st->lgrades[la + (int64_t)j], la + (int64_t)j};
        size_t k = j;
        while (k > 0 && graded_row_cmp(&x, &st->sorted_labels[k - 1]) < 0) {
            st->sorted_labels[k] = st->sorted_labels[k - 1];
            k--;
        }
        st->sorted_labels[k] = x;
    }
    if (vec_reserve(&st->lrows, nl * 8) || vec_reserve(&st->lgr, nl * 4) ||
        vec_reserve(&st->rows, n_items * 4) || vec_reserve(&st->grades, n_items * 4) ||
        vec_reserve(&st->item_label, n_items * 8) || vec_reserve(&st->queries, sizeof(scan_query)))
        return -1;
    int64_t *out_lrows = (int64_t *)st->lrows.p + st->L;
    int32_t *out_lgr = (int32_t *)st->lgr.p + st->L;
    for (size_t j = 0; j < nl; j++) {
        out_lrows[j] = st->sorted_labels[j].row;
        out_lgr[j] = st->sorted_labels[j].grade;
        st->rank_of[st->sorted_labels[j].row - la] = st->L + (int64_t)j;
    }
    size_t lmask = 63; /* an eighth full at most, as the item table */
    while (lmask + 1 < 8 * nl) lmask = 2 * lmask + 1;
    if (grow_table((void **)&st->ltable, &st->ltable_cap, lmask + 1, sizeof(hashed_row)))
        return -1;
    /* a slot holds a stamp plus a row's place among the query's rows (la + place: the row),
       and is this visit's when its value is one of this visit's stamps: any other is empty.
       Each visit has stamps of its own, past those before it: a query whose lines come back
       later in the block (which is then declined) finds its earlier visits' slots empty,
       where its rows alone would have read as its own and, visit after visit, filled the
       table. */
    const int64_t lstamp = st->lstamp;
    st->lstamp += (int64_t)nl;
    hashed_row *const ltable = st->ltable; /* in a local: the outputs' stores could alias it */
#define LROW_IS_OURS(slot) ((uint64_t)(ltable[slot].row - lstamp) < (uint64_t)nl)
    /* bit (hash >> 58) of each judged doc: most items' bit is not set, no table probe */
    uint64_t judged_bits = 0;
    for (int64_t r = la; r < lb; r++) {
        const char *d;
        size_t dn;
        str_at(st->ls, r, &d, &dn);
        const uint64_t h = hash_words(d, dn);
        judged_bits |= 1ULL << (h >> 58);
        size_t slot = h & lmask;
        while (LROW_IS_OURS(slot)) slot = (slot + 1) & lmask;
        ltable[slot].hash = h;
        ltable[slot].row = lstamp + (r - la);
    }
    int32_t *out_rows = (int32_t *)st->rows.p + st->w;
    int32_t *out_grades = (int32_t *)st->grades.p + st->w;
    int64_t *out_label = (int64_t *)st->item_label.p + st->w;
    /* the state's fields in locals: the outputs' stores could alias them, and would have
       them loaded again for every item */
    int32_t *const table = st->table;
    const int32_t *const lgrades = st->lgrades;
    const int64_t *const rank_of = st->rank_of;
    const int64_t limit = st->depth >= 0 ? st->depth : INT64_MAX;
    int64_t kept = 0, dupes = 0;
    for (size_t i = 0; i < n_items; i++) {
        if (repeats(v, (int32_t)i, table, mask, stamp)) { dupes++; continue; }
        if (kept >= limit) continue; /* beyond depth: repeats counted */
        int64_t hit = -1;
        /* the first row of the doc's (linear probing finds the earliest inserted first) */
        if (judged_bits >> (v[i].hash >> 58) & 1) {
            for (size_t slot = v[i].hash & lmask; LROW_IS_OURS(slot); slot = (slot + 1) & lmask) {
                if (ltable[slot].hash != v[i].hash) continue;
                const int64_t row = la + (ltable[slot].row - lstamp);
                const char *d;
                size_t dn;
                str_at(st->ls, row, &d, &dn);
                if (dn == v[i].doc_len && memcmp(d, v[i].doc, dn) == 0) {
                    hit = row;
                    break;
                }
            }
        }
        out_rows[kept] = v[i].line;
        out_grades[kept] = hit >= 0 ? lgrades[hit] : INT32_MIN;
        out_label[kept] = hit >= 0 ? rank_of[hit - la] : -1;
        kept++;
    }
    st->dupes += dupes;
#undef LROW_IS_OURS
    scan_query q = {pos, kept, (int64_t)nl};
    memcpy(st->queries.p + st->queries.len, &q, sizeof(q));
    st->queries.len += sizeof(q);
    st->w += kept;
    st->L += (int64_t)nl;
    st->rows.len = st->grades.len = (size_t)st->w * 4;
    st->item_label.len = (size_t)st->w * 8;
    st->lrows.len = (size_t)st->L * 8;
    st->lgr.len = (size_t)st->L * 4;
    return 0;
}

static int int64_cmp(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Whether two of the m judged queries have one position (one id), which block_align would
   have grouped: 1, 0, or -1 out of memory. */
static int judged_repeat(const scan_query *qs, size_t m) {
    int ascending = 1;
    for (size_t k = 1; k < m && ascending; k++) ascending = qs[k].pos > qs[k - 1].pos;
    if (ascending) return 0;
    int64_t *pos = malloc(m * sizeof(int64_t));
    if (!pos) return -1;
    for (size_t k = 0; k < m; k++) pos[k] = qs[k].pos;
    qsort(pos, m, sizeof(int64_t), int64_cmp);
    int found = 0;
    for (size_t k = 1; k < m && !found; k++) found = pos[k] == pos[k - 1];
    free(pos);
    return found;
}

/* Whether two of the unjudged queries have one id (then the block declines: block_align
   groups a query's lines wherever they are). */
static int unjudged_repeat(const vec *unjudged, const vec *qoffs, const vec *qdata) {
    const size_t k = unjudged->len / 4;
    if (k < 2) return 0;
    const int32_t *codes = (const int32_t *)unjudged->p;
    size_t cap = 16;
    while (cap < 2 * k) cap *= 2;
    int32_t *slots = malloc(cap * sizeof(int32_t));
    if (!slots) return -1;
    memset(slots, 0xff, cap * sizeof(int32_t));
    int found = 0;
    for (size_t j = 0; j < k && !found; j++) {
        const char *p;
        size_t n;
        qid_at(qoffs, qdata, codes[j], &p, &n);
        size_t slot = hash_bytes(p, n) & (cap - 1);
        while (slots[slot] >= 0) {
            const char *o;
            size_t on;
            qid_at(qoffs, qdata, slots[slot], &o, &on);
            if (on == n && memcmp(o, p, n) == 0) { found = 1; break; }
            slot = (slot + 1) & (cap - 1);
        }
        slots[slot] = codes[j];
    }
    free(slots);
    return found;
}

/* The query id (q, qn) as one word masked to its bytes, where it has 8 bytes at most and 8
   can be read at q (qmask 0 otherwise). */
static inline void query_word(const char *q, size_t qn, const char *end, uint64_t *word,
                              uint64_t *mask) {
    *word = *mask = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (qn - 1 < 8 && end - q >= 8) {
        memcpy(word, q, 8);
        *mask = ~0ULL >> (64 - 8 * qn);
        *word &= *mask;
    }
#else
    (void)q; (void)qn; (void)end;
#endif
}

/* Whether the id at p (of the query's length qn) is the query's: one load and a masked
   compare for a short id (query_word), else byte-wise. */
static inline int same_query(const char *p, const char *q, size_t qn, uint64_t word,
                             uint64_t mask, const char *end) {
    if (mask && end - p >= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        return ((x ^ word) & mask) == 0;
    }
    return same_bytes_in(p, q, qn, end);
}

/*
 * scan_block(data, keys, width, qrels offsets int64[NQ+1], qrels docs (off, data, wide, base),
 *     qrels grades int32[rows], depth (-1: none))
 * -> None | (qid_offsets int64[nq+1], qid_data, then block_align's result)
 * A block of a TREC run text parsed, ordered and joined to the qrels in one pass: what
 * parse_trec and block_align give together, bit for bit, without a copy of the doc ids (the
 * lines are read where they are) nor a table of the query ids. It reads each query's lines as
 * they come and orders, dedupes, cuts and joins them when the next query begins: it declines
 * (None) a block whose query's lines are not all together (the two-pass path groups them),
 * and whatever parse_trec declines.
 */
CLONED static PyObject *scan_block(PyObject *self, PyObject *args) {
    Py_buffer data, kb, sb, lob, lgb;
    PyObject *keys_obj, *slots_obj, *loffs_obj, *l_off, *l_data, *lgrades_obj;
    int l_wide;
    Py_ssize_t width, l_base, depth;
    if (!PyArg_ParseTuple(args, "y*OnOOOOinOn", &data, &keys_obj, &width, &slots_obj,
                          &loffs_obj, &l_off, &l_data, &l_wide, &l_base, &lgrades_obj, &depth))
        return NULL;
    int have = 0, declined = 0;
    strargs ls;
    memset(&ls, 0, sizeof(ls));
    scan_state st;
    memset(&st, 0, sizeof(st));
    vec items = {0}, qoffs = {0}, qdata = {0};
    PyObject *result = NULL;
    if (PyObject_GetBuffer(keys_obj, &kb, PyBUF_SIMPLE)) goto done;
    have = 1;
    if (PyObject_GetBuffer(loffs_obj, &lob, PyBUF_SIMPLE)) goto done;
    have = 2;
    if (PyObject_GetBuffer(lgrades_obj, &lgb, PyBUF_SIMPLE)) goto done;
    have = 3;
    if (PyObject_GetBuffer(slots_obj, &sb, PyBUF_SIMPLE)) goto done;
    have = 4;
    if (get_strarr(l_off, l_data, l_wide, l_base, &ls)) goto done;
    st.keys = kb.buf;
    st.width = width;
    st.nkeys = width > 0 ? kb.len / width : 0;
    st.slots = sb.buf;
    st.slot_mask = (size_t)(sb.len / 4) - 1;
    st.loffs = lob.buf;
    st.ls = &ls.s;
    st.lgrades = lgb.buf;
    st.depth = depth;
    /* key_slots': a power of two, at least twice the keys (a probe ends at an empty slot) */
    const Py_ssize_t n_slots = sb.len / 4;
    if (width <= 0 || lob.len / 8 != st.nkeys + 1 || n_slots < 16 || n_slots < 2 * st.nkeys ||
        (n_slots & (n_slots - 1)) ||
        (st.nkeys && lgb.len / 4 < st.loffs[st.nkeys])) {
        PyErr_SetString(PyExc_ValueError, "scan_block: length mismatch");
        goto done;
    }
    /* the outputs at their largest (a line has 12 bytes at least: "q Q0 d 1 1 t"): address
       space, not memory, until written; no copy as they grow. Below 2 GiB, line indices fit
       int32 and doc lengths uint32 (blocks are tens of MB: a larger one is declined). */
    if ((size_t)data.len >= ((size_t)1 << 31)) { declined = 1; goto done; }
    const size_t most = (size_t)data.len / 12 + 16;
    if (vec_reserve(&qoffs, 8) || vec_reserve(&st.rows, most * 4) ||
        vec_reserve(&st.grades, most * 4) || vec_reserve(&st.item_label, most * 8))
        goto nomem;
    { int64_t z = 0; memcpy(qoffs.p, &z, 8); qoffs.len = 8; }
    line_reader r = {.s = data.buf, .len = (size_t)data.len, .i = 0};
    const char *end = (const char *)data.buf + data.len;
    const char *q = NULL; /* the current query's id, and its lines in `items` */
    size_t qn = 0, n_items = 0;
    size_t next_look = 12; /* the line count at which the next look-up step is due */
    /* an id of at most 8 bytes, as one masked word (qmask 0: longer, compared byte-wise): a
       line of six fields has 11 bytes at least from its query id on, so 8 can be read there */
    uint64_t qword = 0, qmask = 0;
    int64_t pos = -2; /* the current query's position, once looked up */
    int32_t nq = 0, line = 0;
    for (;;) {
        const char *fp[6];
        size_t fn[6];
        const int got = next_fields(&r, fp, fn, 6, 0x15u); /* query, doc, score */
        if (got == LINE_SKIP) continue;
        if (got == LINE_DECLINED) { declined = 1; goto done; }
        if (got == LINE_END || !(q && fn[0] == qn && same_query(fp[0], q, qn, qword, qmask, end))) {
            if (q && scan_finish(&st, nq - 1, q, qn, (scan_item *)items.p, n_items, pos))
                goto nomem;
            if (got == LINE_END) break;
            if (nq >= INT32_MAX - 1) { declined = 1; goto done; }
            q = fp[0];
            qn = fn[0];
            n_items = 0;
            next_look = 12;
            pos = -2;
            query_word(q, qn, end, &qword, &qmask);
            if (qn <= (size_t)st.width)
                __builtin_prefetch(&st.slots[hash_words(q, qn) & st.slot_mask]);
            if (vec_reserve(&qdata, qn) || vec_reserve(&qoffs, 8)) goto nomem;
            memcpy(qdata.p + qdata.len, q, qn);
            qdata.len += qn;
            { int64_t o = (int64_t)qdata.len; memcpy(qoffs.p + qoffs.len, &o, 8); qoffs.len += 8; }
            nq++;
        }
        if (vec_reserve(&items, sizeof(scan_item))) goto nomem;
        scan_item *it = (scan_item *)items.p + n_items;
        if (plain_decimal_at(fp[4], fn[4], end, &it->score) &&
            parse_float(fp[4], fn[4], &it->score)) {
            declined = 1;
            goto done;
        }
        it->doc = fp[2];
        it->doc_len = (uint32_t)fn[2];
        it->line = line++;
        it->hash = hash_words_in(fp[2], fn[2], end);
        n_items++;
        items.len += sizeof(scan_item);
        /* The query's look-ups are cache misses (a slot, its key, its judgments' offsets,
           grades and doc ids: megabytes of qrels): prefetched 12 lines apart while the
           query's lines are read, each once the one before has arrived (8 apart left a
           million-query run 15 % slower: a miss and its page walk take longer than 8 lines) */
        if (n_items != next_look) continue;
        next_look += 12;
        if (n_items == 12) {
            const size_t slot = hash_words(q, qn) & st.slot_mask;
            if (st.slots[slot] >= 0)
                __builtin_prefetch(st.keys + (Py_ssize_t)st.slots[slot] * st.width);
        } else if (n_items == 24) {
            pos = slot_position(st.keys, st.width, st.slots, st.slot_mask, q, qn);
            if (pos >= 0) __builtin_prefetch(&st.loffs[pos]);
        } else if (n_items == 36 && pos >= 0) {
            const int64_t at = ls.s.base + st.loffs[pos];
            __builtin_prefetch(&st.lgrades[st.loffs[pos]]);
            if (ls.s.wide) __builtin_prefetch((const int64_t *)ls.s.offsets + at);
            else __builtin_prefetch((const int32_t *)ls.s.offsets + at);
        } else if (n_items == 48 && pos >= 0) {
            const char *d;
            size_t dn;
            str_at(&ls.s, st.loffs[pos], &d, &dn);
            __builtin_prefetch(d);
            __builtin_prefetch(d + 64);
        }
    }
    if (line == 0) { declined = 1; goto done; } /* no line: parse_trec declines it too */
    /* each judged query once (in the order of the block) */
    scan_query *qs = (scan_query *)st.queries.p;
    const size_t m = st.queries.len / sizeof(scan_query);
    {
        const int rep = judged_repeat(qs, m), rep2 = unjudged_repeat(&st.unjudged, &qoffs, &qdata);
        if (rep < 0 || rep2 < 0) goto nomem;
        if (rep || rep2) { declined = 1; goto done; }
    }
    {
        char *obuf, *lobuf;
        PyObject *offs_obj = new_bytearray((Py_ssize_t)(m + 1) * 8, &obuf);
        PyObject *loffs_out = new_bytearray((Py_ssize_t)(m + 1) * 8, &lobuf);
        if (!offs_obj || !loffs_out) { Py_XDECREF(offs_obj); Py_XDECREF(loffs_out); goto done; }
        int64_t *offs = (int64_t *)obuf, *label_offs = (int64_t *)lobuf;
        int64_t w = 0, L = 0;
        for (size_t k = 0; k < m; k++) {
            offs[k] = w;
            label_offs[k] = L;
            w += qs[k].nw;
            L += qs[k].nl;
        }
        offs[m] = w;
        label_offs[m] = L;
        PyObject *a = vec_to_bytearray(&qoffs), *b = vec_to_bytearray(&qdata),
                 *c = vec_to_bytearray(&st.qpos), *d = vec_to_bytearray(&st.rows),
                 *e = vec_to_bytearray(&st.grades), *f = vec_to_bytearray(&st.item_label),
                 *g = vec_to_bytearray(&st.lrows), *h = vec_to_bytearray(&st.lgr);
        if (a && b && c && d && e && f && g && h)
            result = Py_BuildValue("(NNNNNNNNNNL)", a, b, c, offs_obj, d, e, f, loffs_out, g, h,
                                   (long long)st.dupes);
        else {
            Py_XDECREF(a); Py_XDECREF(b); Py_XDECREF(c); Py_XDECREF(d); Py_XDECREF(e);
            Py_XDECREF(f); Py_XDECREF(g); Py_XDECREF(h); Py_DECREF(offs_obj);
            Py_DECREF(loffs_out);
        }
    }
    goto done;
nomem:
    if (!PyErr_Occurred()) PyErr_NoMemory();
done:
    if (declined && !PyErr_Occurred()) { result = Py_None; Py_INCREF(result); }
    PyBuffer_Release(&data);
    if (have >= 1) PyBuffer_Release(&kb);
    if (have >= 2) PyBuffer_Release(&lob);
    if (have >= 3) PyBuffer_Release(&lgb);
    if (have >= 4) PyBuffer_Release(&sb);
    release_strarr(&ls);
    free(items.p); free(qoffs.p); free(qdata.p);
    free(st.tmp); free(st.table); free(st.ltable); free(st.sorted_labels); free(st.rank_of);
    free(st.qpos.p); free(st.rows.p); free(st.grades.p); free(st.item_label.p);
    free(st.lrows.p); free(st.lgr.p); free(st.queries.p); free(st.unjudged.p);
    return result;
}

static PyMethodDef methods[] = {
    {"parse_trec", parse_trec, METH_VARARGS, "Parse a TREC run (kind 0) or qrels (kind 1)."},
    {"encode", encode, METH_VARARGS, "Dictionary-encode an Arrow string array's buffers."},
    {"order", order, METH_VARARGS, "Group rows by query rank and order them within a query."},
    {"join", join, METH_VARARGS, "Grade of every aligned run item by (query, doc)."},
    {"block_align", block_align, METH_VARARGS, "A parsed run block ordered and joined to qrels."},
    {"key_slots", key_slots, METH_VARARGS, "Hash table of the positions of fixed-width keys."},
    {"scan_block", scan_block, METH_VARARGS, "A run block parsed, ordered and joined in one pass."},
    {"take_strings", take_strings, METH_VARARGS, "Rows of a string array, sized exactly."},
    {"permute_offsets", permute_offsets, METH_VARARGS, "Offsets of a permuted string array."},
    {"scatter_docs", scatter_docs, METH_VARARGS, "A TREC text's doc ids in a new row order."},
    {"strings_placed", strings_placed, METH_VARARGS, "A string array's rows, placed in a list."},
    {"qrels_stretches", qrels_stretches, METH_VARARGS, "Each query's stretch of qrels lines."},
    {"qrels_place", qrels_place, METH_VARARGS, "Qrels stretches read into their final rows."},
    {"fixed_width", fixed_width, METH_VARARGS, "ASCII ids NUL-padded to one width."},
    {"required", required, METH_VARARGS, "Greedy required subset P* of each query."},
    {"ideal_alpha_dcg", ideal_alpha_dcg, METH_VARARGS, "ndeval's greedy ideal alpha-DCG."},
    {"answerable", answerable, METH_VARARGS, "Answerable questions of every query."},
    {"doc_index", doc_index, METH_VARARGS, "Hash table of the rows of a string array."},
    {"doc_lookup", doc_lookup, METH_VARARGS, "Row of each string in a doc_index table."},
    {"ascii_tokens", ascii_tokens, METH_VARARGS, "Whitespace tokens of ASCII texts."},
    {"segment_sums", segment_sums, METH_VARARGS, "Left-to-right sum of each segment."},
    {"segment_cumsum", segment_cumsum, METH_VARARGS, "Left-to-right running sums per segment."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native",
                                    "ragmeter's optional accelerator.", -1, methods};

PyMODINIT_FUNC PyInit__native(void) {
    init_classes();
    if (PyType_Ready(&OwnedBufferType) < 0) return NULL;
    return PyModule_Create(&module);
}
