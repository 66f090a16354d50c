/* The DRY lens's normalization (fingerprints.py) in two passes over a file's bytes.

   fingerprints.py holds the definition: its regular expressions say what a file's normalized lines
   are, and this module gives the same lines for text whose comments and strings blanked leave it
   all ASCII (almost every file), or answers None and the Python path runs. Each scanner below
   follows its pattern's leftmost-first matching: at every position the branches are tried in the
   pattern's order and a failed match moves on by one character, as `re` does. Every pattern is
   written unrolled (no branch can match in two ways), so each one is a loop here, and
   tests/test_compiled_normalization.py compares the two on real code and random text.

   The branch's files are untrusted input: every read is bounded by the length it was given, no
   step's output is longer than its input (a buffer of the input's length holds it), and an
   opening with no end after it is searched for once, not once per opening (a file of unclosed
   block comments would otherwise cost the square of its length).

   After it, the names of a region compared with one renaming: in order (fingerprints.renaming_share)
   and line by line, each line paired with one of the same shape near it (reordering.py);
   tests/test_dry_reordering_compiled.py compares the pairing with its Python definition. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum { FAMILY_NONE = 0, FAMILY_HASH = 1, FAMILY_C = 2 };

#define WINDOW 40           /* fingerprints.WINDOW */
#define MAX_LINE_LENGTH 400 /* fingerprints.MAX_LINE_LENGTH */
#define IDENTIFIER_MARK 1   /* fingerprints.IDENTIFIER_MARK */
#define MAX_KEYWORD 16
static const uint64_t BASE = 0x100000001B3ULL; /* hashes.BASE */

/* The keywords by length, set once from fingerprints.KEYWORDS (the one list of them), each packed
   into two 8-byte numbers (zeros after its end): a word is one of them when both numbers match. */
typedef struct {
    uint64_t head, tail;
} Packed;
static Packed *keywords[MAX_KEYWORD + 1];
static Py_ssize_t keyword_counts[MAX_KEYWORD + 1];
/* Bit `length` of keyword_lengths[c]: some keyword of that length starts with `c`. Most names are
   told apart from every keyword by this one lookup. */
static uint32_t keyword_lengths[256];

static inline Packed packed(const unsigned char *word, Py_ssize_t length)
{
    Packed result = {0, 0};
    memcpy(&result.head, word, (size_t)(length < 8 ? length : 8));
    if (length > 8)
        memcpy(&result.tail, word + 8, (size_t)(length - 8));
    return result;
}

/* What each byte is to the scanners, a bit each: a table lookup where a chain of comparisons
   took a branch each. `\w` and `\d` are the ASCII ones (the compiled path reads ASCII text only). */
enum { WORD = 1, DIGIT = 2, SPACE = 4, NAME_START = 8, NEWLINE = 16 };
#define LETTERS(bits)                                                                                            \
    ['a'] = bits, ['b'] = bits, ['c'] = bits, ['d'] = bits, ['e'] = bits, ['f'] = bits, ['g'] = bits, ['h'] = bits, \
    ['i'] = bits, ['j'] = bits, ['k'] = bits, ['l'] = bits, ['m'] = bits, ['n'] = bits, ['o'] = bits, ['p'] = bits, \
    ['q'] = bits, ['r'] = bits, ['s'] = bits, ['t'] = bits, ['u'] = bits, ['v'] = bits, ['w'] = bits, ['x'] = bits, \
    ['y'] = bits, ['z'] = bits
#define CAPITALS(bits)                                                                                           \
    ['A'] = bits, ['B'] = bits, ['C'] = bits, ['D'] = bits, ['E'] = bits, ['F'] = bits, ['G'] = bits, ['H'] = bits, \
    ['I'] = bits, ['J'] = bits, ['K'] = bits, ['L'] = bits, ['M'] = bits, ['N'] = bits, ['O'] = bits, ['P'] = bits, \
    ['Q'] = bits, ['R'] = bits, ['S'] = bits, ['T'] = bits, ['U'] = bits, ['V'] = bits, ['W'] = bits, ['X'] = bits, \
    ['Y'] = bits, ['Z'] = bits
static const unsigned char CLASS[256] = {
    LETTERS(WORD | NAME_START), CAPITALS(WORD | NAME_START), ['_'] = WORD | NAME_START, ['$'] = NAME_START,
    ['0'] = WORD | DIGIT, ['1'] = WORD | DIGIT, ['2'] = WORD | DIGIT, ['3'] = WORD | DIGIT, ['4'] = WORD | DIGIT,
    ['5'] = WORD | DIGIT, ['6'] = WORD | DIGIT, ['7'] = WORD | DIGIT, ['8'] = WORD | DIGIT, ['9'] = WORD | DIGIT,
    [' '] = SPACE, ['\t'] = SPACE, ['\r'] = SPACE, ['\f'] = SPACE, ['\v'] = SPACE, ['\n'] = NEWLINE,
};

static inline int is_word(unsigned char c)
{
    return CLASS[c] & WORD;
}

static int is_keyword(const unsigned char *word, Py_ssize_t length)
{
    if (length < 1 || length > MAX_KEYWORD || !(keyword_lengths[word[0]] >> length & 1))
        return 0;
    Packed key = packed(word, length);
    const Packed *candidate = keywords[length];
    for (Py_ssize_t k = 0; k < keyword_counts[length]; k++)
        if (candidate[k].head == key.head && candidate[k].tail == key.tail)
            return 1;
    return 0;
}

/* Where a match starting at `start` ends (one past it), or -1 when the branch fails. */

static Py_ssize_t line_end(const unsigned char *in, Py_ssize_t n, Py_ssize_t start)
{
    const unsigned char *newline = memchr(in + start, '\n', (size_t)(n - start));
    return newline == NULL ? n : newline - in;
}

/* "[^"\\\n]*(?:\\.[^"\\\n]*)*": one line, a backslash escaping any character but a newline. */
static Py_ssize_t quoted_end(const unsigned char *in, Py_ssize_t n, Py_ssize_t start, unsigned char quote)
{
    for (Py_ssize_t j = start + 1; j < n; j++) {
        unsigned char c = in[j];
        if (c == quote)
            return j + 1;
        if (c == '\n')
            return -1;
        if (c == '\\') {
            if (j + 1 >= n || in[j + 1] == '\n')
                return -1;
            j++;
        }
    }
    return -1;
}

/* `[^`\\]*(?:\\.[^`\\]*)*`: over lines, a backslash escaping any character but a newline. */
static Py_ssize_t template_end(const unsigned char *in, Py_ssize_t n, Py_ssize_t start)
{
    for (Py_ssize_t j = start + 1; j < n; j++) {
        unsigned char c = in[j];
        if (c == '`')
            return j + 1;
        if (c == '\\') {
            if (j + 1 >= n || in[j + 1] == '\n')
                return -1;
            j++;
        }
    }
    return -1;
}

/* Three quotes, then everything up to the first three quotes after them. */
static Py_ssize_t triple_end(const unsigned char *in, Py_ssize_t n, Py_ssize_t start, unsigned char quote)
{
    for (Py_ssize_t j = start + 3; j + 2 < n; j++)
        if (in[j] == quote && in[j + 1] == quote && in[j + 2] == quote)
            return j + 3;
    return -1;
}

/* A block comment, from its opening up to the first star-slash after it. */
static Py_ssize_t block_end(const unsigned char *in, Py_ssize_t n, Py_ssize_t start)
{
    for (Py_ssize_t j = start + 2; j + 1 < n; j++)
        if (in[j] == '*' && in[j + 1] == '/')
            return j + 2;
    return -1;
}

/* The characters that may start a comment or a string, by family: every other one is copied as
   it is, a run at a time. */
static const unsigned char OPENS_HASH[256] = {['#'] = 1, ['"'] = 1, ['\''] = 1};
static const unsigned char OPENS_C[256] = {['/'] = 1, ['`'] = 1, ['"'] = 1, ['\''] = 1};

/* fingerprints._blank: a comment leaves its newlines, a string `"` and its newlines. Sets
   `*ascii` to whether what is left is all ASCII (a comment's or a string's bytes are not). */
static Py_ssize_t blank(const unsigned char *in, Py_ssize_t n, int family, unsigned char *out, int *ascii)
{
    static const unsigned char OPENS_NONE[256] = {0};
    const unsigned char *opens = family == FAMILY_HASH ? OPENS_HASH : family == FAMILY_C ? OPENS_C : OPENS_NONE;
    unsigned char seen = 0;
    Py_ssize_t i = 0, w = 0;
    /* From where on no block comment, no triple-quoted string of each quote, can end: an end found
       after a later opening would be after this one too. */
    Py_ssize_t no_block_end = n, no_triple_end[2] = {n, n};
    while (i < n) {
        unsigned char c = 0;
        while (i < n && !opens[c = in[i]]) {
            out[w++] = c;
            seen |= c;
            i++;
        }
        if (i == n)
            break;
        Py_ssize_t end = -1;
        int string = 1;
        if (family == FAMILY_HASH) {
            if (c == '#') {
                end = line_end(in, n, i);
                string = 0;
            } else {
                Py_ssize_t *unclosed = &no_triple_end[c == '"'];
                if (i + 2 < n && in[i + 1] == c && in[i + 2] == c && i < *unclosed) {
                    end = triple_end(in, n, i, c);
                    if (end < 0)
                        *unclosed = i;
                }
                if (end < 0)
                    end = quoted_end(in, n, i, c);
            }
        } else if (c == '/') {
            if (i + 1 < n && in[i + 1] == '/')
                end = line_end(in, n, i);
            else if (i + 1 < n && in[i + 1] == '*' && i < no_block_end) {
                end = block_end(in, n, i);
                if (end < 0)
                    no_block_end = i;
            }
            string = 0;
        } else if (c == '`') {
            end = template_end(in, n, i);
        } else {
            end = quoted_end(in, n, i, c);
        }
        if (end < 0) {
            out[w++] = c;
            i++;
            continue;
        }
        if (string)
            out[w++] = '"';
        for (; i < end; i++)
            if (in[i] == '\n')
                out[w++] = '\n';
    }
    *ascii = !(seen & 0x80);
    return w;
}

static inline int starts_with(const unsigned char *line, Py_ssize_t length, const char *prefix)
{
    size_t size = strlen(prefix);
    return (size_t)length >= size && memcmp(line, prefix, size) == 0;
}

/* fingerprints._IMPORT_START at the start of a line (its spaces already gone). */
static int is_import(const unsigned char *line, Py_ssize_t length)
{
    if (starts_with(line, length, "import") || starts_with(line, length, "from") || starts_with(line, length, "package")
        || starts_with(line, length, "using") || starts_with(line, length, "#include") || starts_with(line, length, "require(")
        || starts_with(line, length, "export*from"))
        return 1;
    if (!starts_with(line, length, "export{"))
        return 0;
    for (Py_ssize_t j = 7; j < length; j++)
        if (line[j] == '}')
            return starts_with(line + j + 1, length - j - 1, "from");
    return 0;
}

/* Whether an identifier starts at `i` of the blanked text: `[A-Za-z_$]` after `\b`, not a keyword.
   `*word_end` is where the run of word characters from `i` ends. */
static inline int identifier_at(const unsigned char *in, Py_ssize_t n, Py_ssize_t i, Py_ssize_t *word_end)
{
    unsigned char kind = CLASS[in[i]];
    int word = kind & WORD;
    if (!(kind & NAME_START) || (i > 0 && is_word(in[i - 1])) == word)
        return 0;
    Py_ssize_t end = i;
    while (end < n && is_word(in[end]))
        end++;
    *word_end = end;
    return !is_keyword(in + i, end - i);
}

/* fingerprints._normalized_blanked on ASCII text, in one pass: the identifiers (`_IDENTIFIER`)
   become IDENTIFIER_MARK, then the numbers (`_NUMBER`, over that text) `0`, then the spaces go
   (`_NO_SPACE`) and the import and over-long lines are emptied (`_DROPPED_LINE`). The lines go to
   `out` with nothing between them, line k ending at `ends[k]`; returns how many lines there are.

   One pass gives what the patterns' four give: a number's `[\w.]*` in the marked text stops at
   the first mark, which is where an identifier starts in the blanked text after one of the
   number's dots (its only non-word character); the number's lookbehind, no word character
   before it, reads the same in either text (a word character before a digit is part of an
   identifier, which takes the digit too, or of a number, which did); and the spaces and lines
   are taken out after the marks, as the patterns do, by reading `in` for what the marks look at
   and `out` for what the lines hold. */
static Py_ssize_t normalize_lines(const unsigned char *in, Py_ssize_t n, unsigned char *out, uint32_t *ends)
{
    Py_ssize_t i = 0, w = 0, line_start = 0, lines = 0, word_end;
    for (;;) {
        unsigned char c = i < n ? in[i] : '\n', kind = CLASS[c];
        if (!kind) { /* an operator, a mark: kept */
            out[w++] = c;
            i++;
            continue;
        }
        if (kind & NEWLINE) {
            if (w - line_start > MAX_LINE_LENGTH || is_import(out + line_start, w - line_start))
                w = line_start;
            ends[lines++] = (uint32_t)w;
            if (i == n)
                return lines;
            line_start = w;
            i++;
            continue;
        }
        if (kind & SPACE) {
            for (i++; i < n && CLASS[in[i]] & SPACE; i++)
                ;
        } else if (identifier_at(in, n, i, &word_end)) {
            i = word_end;
            while (i < n && (is_word(in[i]) || in[i] == '$'))
                i++;
            out[w++] = IDENTIFIER_MARK;
        } else if ((kind & DIGIT) && !(i > 0 && is_word(in[i - 1]))) {
            for (i++; i < n && (is_word(in[i]) || in[i] == '.'); i++)
                if (in[i - 1] == '.' && identifier_at(in, n, i, &word_end))
                    break;
            out[w++] = '0';
        } else {
            out[w++] = c;
            i++;
        }
    }
}

/* A file's normalization: its blanked text in `blanked` and its normalized lines in `lines` (each n
   bytes) with their ends in `ends` (n + 1 of them). Returns the number of lines, or -1 when the
   blanked text is not all ASCII (the Python path's Unicode patterns then apply). */
static Py_ssize_t normalize_into(const unsigned char *source, Py_ssize_t n, int family, unsigned char *blanked,
                                 Py_ssize_t *blanked_length, unsigned char *lines, uint32_t *ends)
{
    int ascii;
    *blanked_length = blank(source, n, family, blanked, &ascii);
    if (!ascii)
        return -1;
    return normalize_lines(blanked, *blanked_length, lines, ends);
}

/* The buffers of a normalization: two of the source's length and its line ends. One set serves
   every call (each runs under the GIL, start to end), grown to the largest file yet: fresh pages
   for each file cost the kernel as much as the normalization itself. A call made while that set
   is in use (by a finalizer the garbage collector runs as a call makes its Python objects) gets
   buffers of its own, so the set is never grown under a call still reading it. */
typedef struct {
    unsigned char *blanked, *lines;
    uint32_t *ends;
    int own;
} Buffers;

static unsigned char *text_buffer;
static uint32_t *ends_buffer;
static Py_ssize_t buffer_capacity = -1;
static int buffers_in_use;

static int buffers_for(Py_ssize_t n, Buffers *buffers)
{
    if (buffers_in_use) {
        buffers->blanked = PyMem_Malloc((size_t)(2 * n + 1));
        buffers->ends = PyMem_Malloc(sizeof(uint32_t) * (size_t)(n + 1));
        if (buffers->blanked == NULL || buffers->ends == NULL) {
            PyMem_Free(buffers->blanked);
            PyMem_Free(buffers->ends);
            PyErr_NoMemory();
            return -1;
        }
        buffers->lines = buffers->blanked + n;
        buffers->own = 1;
        return 0;
    }
    if (n > buffer_capacity) {
        unsigned char *text = PyMem_Realloc(text_buffer, (size_t)(2 * n + 1));
        if (text == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        text_buffer = text;
        uint32_t *ends = PyMem_Realloc(ends_buffer, sizeof(uint32_t) * (size_t)(n + 1));
        if (ends == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        ends_buffer = ends;
        buffer_capacity = n;
    }
    buffers->blanked = text_buffer;
    buffers->lines = text_buffer + n;
    buffers->ends = ends_buffer;
    buffers->own = 0;
    buffers_in_use = 1;
    return 0;
}

static void buffers_release(Buffers *buffers)
{
    if (buffers->own) {
        PyMem_Free(buffers->blanked);
        PyMem_Free(buffers->ends);
    } else {
        buffers_in_use = 0;
    }
}

static int all_ascii(const unsigned char *text, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        if (text[i] & 0x80)
            return 0;
    return 1;
}

/* The comment family of a call `(source, family)` whose source is a `source_type`, or -1 with the
   error set (TypeError naming the call's `signature`, ValueError naming an unknown family). */
static int family_argument(PyObject *const *arguments, Py_ssize_t count, PyTypeObject *source_type,
                           const char *signature)
{
    if (count != 2 || !PyObject_TypeCheck(arguments[0], source_type) || !PyLong_Check(arguments[1])) {
        PyErr_SetString(PyExc_TypeError, signature);
        return -1;
    }
    long family = PyLong_AsLong(arguments[1]);
    if (family == -1 && PyErr_Occurred())
        return -1;
    if (family != FAMILY_NONE && family != FAMILY_HASH && family != FAMILY_C) {
        PyErr_Format(PyExc_ValueError, "unknown comment family %ld", family);
        return -1;
    }
    return (int)family;
}

static PyObject *set_keywords(PyObject *module, PyObject *words)
{
    (void)module;
    PyObject *sequence = PySequence_Fast(words, "keywords must be a sequence of strings");
    if (sequence == NULL)
        return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
    Packed *tables[MAX_KEYWORD + 1] = {NULL};
    Py_ssize_t counts[MAX_KEYWORD + 1] = {0};
    uint32_t lengths[256] = {0};
    for (int length = 1; length <= MAX_KEYWORD; length++) {
        tables[length] = PyMem_Calloc((size_t)(count ? count : 1), sizeof(Packed));
        if (tables[length] == NULL) {
            PyErr_NoMemory();
            goto failed;
        }
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(sequence, k);
        Py_ssize_t size;
        const char *word = PyUnicode_AsUTF8AndSize(item, &size);
        if (word == NULL)
            goto failed;
        if (size < 1 || size > MAX_KEYWORD || !all_ascii((const unsigned char *)word, size)) {
            PyErr_Format(PyExc_ValueError, "keyword %R is not 1 to %d ASCII characters", item, MAX_KEYWORD);
            goto failed;
        }
        tables[size][counts[size]++] = packed((const unsigned char *)word, size);
        lengths[(unsigned char)word[0]] |= (uint32_t)1 << size;
    }
    Py_DECREF(sequence);
    for (int length = 0; length <= MAX_KEYWORD; length++) {
        PyMem_Free(keywords[length]);
        keywords[length] = tables[length];
        keyword_counts[length] = counts[length];
    }
    memcpy(keyword_lengths, lengths, sizeof lengths);
    Py_RETURN_NONE;
failed:
    for (int length = 0; length <= MAX_KEYWORD; length++)
        PyMem_Free(tables[length]);
    Py_DECREF(sequence);
    return NULL;
}

/* normalize(source: str, family: int) -> (blanked: str, lines: list[str] | None) | None: the lines
   are None when the blanked text is not all ASCII (the Unicode patterns then mark its names, from
   this blanked text, a seventh of the patterns' time); the whole is None for a string UTF-8 cannot
   encode (a lone surrogate). */
static PyObject *normalize(PyObject *module, PyObject *const *arguments, Py_ssize_t count)
{
    (void)module;
    int family = family_argument(arguments, count, &PyUnicode_Type, "normalize(source: str, family: int)");
    if (family < 0)
        return NULL;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(arguments[0]) < 0) /* a string made the old way (gone in 3.12) */
        return NULL;
#endif
    PyObject *encoded = NULL;
    const char *source;
    Py_ssize_t n;
    if (PyUnicode_IS_ASCII(arguments[0])) {
        source = PyUnicode_AsUTF8AndSize(arguments[0], &n); /* the string's own buffer: no copy */
        if (source == NULL)
            return NULL;
    } else {
        /* Blanking reads only ASCII characters, which UTF-8 keeps as they are: the same on the
           encoded bytes. A surrogate, which UTF-8 cannot encode, leaves it to the Python path. */
        encoded = PyUnicode_AsUTF8String(arguments[0]);
        if (encoded == NULL) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        source = PyBytes_AS_STRING(encoded);
        n = PyBytes_GET_SIZE(encoded);
    }
    Buffers buffers;
    if (buffers_for(n, &buffers) < 0) {
        Py_XDECREF(encoded);
        return NULL;
    }
    Py_ssize_t blanked_length;
    Py_ssize_t lines = normalize_into((const unsigned char *)source, n, family, buffers.blanked, &blanked_length,
                                      buffers.lines, buffers.ends);
    Py_XDECREF(encoded);
    PyObject *result = NULL;
    if (lines < 0) {
        /* Whole characters are kept or blanked: a match starts and ends at ASCII characters. */
        PyObject *blanked_text = PyUnicode_DecodeUTF8((const char *)buffers.blanked, blanked_length, NULL);
        buffers_release(&buffers);
        if (blanked_text == NULL)
            return NULL;
        result = PyTuple_Pack(2, blanked_text, Py_None);
        Py_DECREF(blanked_text);
        return result;
    }
    PyObject *blanked_text = PyUnicode_DecodeASCII((const char *)buffers.blanked, blanked_length, NULL);
    PyObject *list = PyList_New(lines);
    if (blanked_text != NULL && list != NULL) {
        Py_ssize_t k;
        for (k = 0; k < lines; k++) {
            uint32_t start = k == 0 ? 0 : buffers.ends[k - 1];
            PyObject *line = PyUnicode_DecodeASCII((const char *)buffers.lines + start, buffers.ends[k] - start, NULL);
            if (line == NULL)
                break;
            PyList_SET_ITEM(list, k, line);
        }
        if (k == lines)
            result = PyTuple_Pack(2, blanked_text, list);
    }
    buffers_release(&buffers);
    Py_XDECREF(blanked_text);
    Py_XDECREF(list);
    return result;
}

/* anchor_hashes(data: bytes, family: int) -> bytes | None: the hashes (4-byte native unsigned
   integers) of the windows at each non-empty normalized line's start, as
   `Normalized.of(decode_text(data), language).anchor_hashes(...anchor_offsets())` gives them. */
static PyObject *anchor_hashes(PyObject *module, PyObject *const *arguments, Py_ssize_t count)
{
    (void)module;
    int family = family_argument(arguments, count, &PyBytes_Type, "anchor_hashes(data: bytes, family: int)");
    if (family < 0)
        return NULL;
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(arguments[0]);
    Py_ssize_t n = PyBytes_GET_SIZE(arguments[0]);
    if (n >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF) { /* decode_text drops the mark */
        data += 3;
        n -= 3;
    }
    Buffers buffers;
    if (buffers_for(n, &buffers) < 0)
        return NULL;
    Py_ssize_t blanked_length;
    Py_ssize_t lines = normalize_into(data, n, family, buffers.blanked, &blanked_length, buffers.lines, buffers.ends);
    if (lines < 0) {
        buffers_release(&buffers);
        Py_RETURN_NONE;
    }
    /* The window at each non-empty line's start (anchor_offsets), while a whole window fits before
       the end of the text: its starts only grow, so the first that does not ends them. */
    Py_ssize_t text_length = lines ? buffers.ends[lines - 1] : 0, anchors = 0;
    uint32_t start = 0;
    for (Py_ssize_t k = 0; k < lines; k++) {
        uint32_t end = buffers.ends[k];
        if (end > start) {
            if ((Py_ssize_t)start > text_length - WINDOW)
                break;
            buffers.ends[anchors++] = start; /* over ends[anchors <= k]: those are read already */
        }
        start = end;
    }
    uint64_t half_power = 1; /* BASE ** (WINDOW / 2), modulo 2 ** 64 */
    for (int j = 0; j < WINDOW / 2; j++)
        half_power *= BASE;
    PyObject *result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(anchors * sizeof(uint32_t)));
    if (result != NULL) {
        uint32_t *hashes = (uint32_t *)PyBytes_AS_STRING(result);
        for (Py_ssize_t k = 0; k < anchors; k++) {
            /* Horner's rule in two halves, whose chains of products run side by side. */
            const unsigned char *window = buffers.lines + buffers.ends[k];
            uint64_t low = 0, high = 0;
            for (int j = WINDOW / 2 - 1; j >= 0; j--) {
                low = low * BASE + window[j];
                high = high * BASE + window[j + WINDOW / 2];
            }
            hashes[k] = (uint32_t)((high * half_power + low) >> 32);
        }
    }
    buffers_release(&buffers);
    return result;
}

/* window_hashes(data: bytes, offsets: 4-byte unsigned integers) -> bytes: the hash (hashes.py) of
   the WINDOW bytes of `data` at each offset, as 4-byte native unsigned integers. */
static PyObject *window_hashes(PyObject *module, PyObject *arguments)
{
    (void)module;
    Py_buffer data, offsets;
    if (!PyArg_ParseTuple(arguments, "y*y*:window_hashes", &data, &offsets))
        return NULL;
    PyObject *result = NULL;
    if (offsets.len % (Py_ssize_t)sizeof(uint32_t) != 0) {
        PyErr_Format(PyExc_ValueError, "window_hashes: offsets of %zd bytes are not 4-byte items", offsets.len);
        goto done;
    }
    Py_ssize_t count = offsets.len / (Py_ssize_t)sizeof(uint32_t);
    result = PyBytes_FromStringAndSize(NULL, offsets.len);
    if (result == NULL)
        goto done;
    uint64_t half_power = 1; /* BASE ** (WINDOW / 2), modulo 2 ** 64 */
    for (int j = 0; j < WINDOW / 2; j++)
        half_power *= BASE;
    const unsigned char *bytes = data.buf;
    uint32_t *hashes = (uint32_t *)PyBytes_AS_STRING(result);
    for (Py_ssize_t k = 0; k < count; k++) {
        uint32_t offset;
        memcpy(&offset, (const unsigned char *)offsets.buf + k * (Py_ssize_t)sizeof(uint32_t), sizeof offset);
        if ((Py_ssize_t)offset > data.len - WINDOW) {
            PyErr_Format(PyExc_ValueError, "window_hashes: offset %u has no whole window in %zd bytes", offset, data.len);
            Py_CLEAR(result);
            goto done;
        }
        /* Horner's rule in two halves, as anchor_hashes. */
        const unsigned char *window = bytes + offset;
        uint64_t low = 0, high = 0;
        for (int j = WINDOW / 2 - 1; j >= 0; j--) {
            low = low * BASE + window[j];
            high = high * BASE + window[j + WINDOW / 2];
        }
        hashes[k] = (uint32_t)((high * half_power + low) >> 32);
    }
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&offsets);
    return result;
}

/* consecutive_offsets(start, stop) -> bytes: the 4-byte native offsets start, start + 1, ...,
   stop - 1, the windows of a stretch of added lines (Normalized.windows_in): made here, where
   array.extend(range(...)) made a Python int of each of 2.4 million windows at +304k appended. */
static PyObject *consecutive_offsets(PyObject *module, PyObject *arguments)
{
    (void)module;
    Py_ssize_t start, stop;
    if (!PyArg_ParseTuple(arguments, "nn:consecutive_offsets", &start, &stop))
        return NULL;
    if (start < 0 || stop > (Py_ssize_t)UINT32_MAX + 1) {
        PyErr_Format(PyExc_ValueError, "consecutive_offsets: %zd to %zd is not within 4-byte offsets", start, stop);
        return NULL;
    }
    Py_ssize_t count = stop > start ? stop - start : 0;
    PyObject *result = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(uint32_t));
    if (result == NULL)
        return NULL;
    uint32_t *offsets = (uint32_t *)PyBytes_AS_STRING(result);
    for (Py_ssize_t k = 0; k < count; k++)
        offsets[k] = (uint32_t)(start + k);
    return result;
}

/* line_starts(text) -> bytes | None: where each line of `text` starts (0, then one past each
   newline), then one past its end, as 4-byte native offsets (Normalized._blanked_starts); None when
   they would not fit in 4 bytes. Made here for each file a region is judged against, where Python
   split the text and summed its lines' lengths (391 files at +304k appended). */
static PyObject *line_starts(PyObject *module, PyObject *text)
{
    (void)module;
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "line_starts: the text is a str");
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0)
        return NULL;
#endif
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), lines = 1;
    if (length >= (Py_ssize_t)UINT32_MAX)
        Py_RETURN_NONE;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    const char *bytes = kind == PyUnicode_1BYTE_KIND ? data : NULL; /* almost every file: memchr */
    if (bytes != NULL) {
        for (const char *at = bytes; (at = memchr(at, '\n', (size_t)(bytes + length - at))) != NULL; at++)
            lines++;
    } else {
        for (Py_ssize_t at = 0; at < length; at++)
            lines += PyUnicode_READ(kind, data, at) == '\n';
    }
    PyObject *result = PyBytes_FromStringAndSize(NULL, (lines + 1) * (Py_ssize_t)sizeof(uint32_t));
    if (result == NULL)
        return NULL;
    uint32_t *starts = (uint32_t *)PyBytes_AS_STRING(result);
    Py_ssize_t line = 0;
    starts[line++] = 0;
    if (bytes != NULL) {
        for (const char *at = bytes; (at = memchr(at, '\n', (size_t)(bytes + length - at))) != NULL; at++)
            starts[line++] = (uint32_t)(at - bytes + 1);
    } else {
        for (Py_ssize_t at = 0; at < length; at++)
            if (PyUnicode_READ(kind, data, at) == '\n')
                starts[line++] = (uint32_t)(at + 1);
    }
    starts[line] = (uint32_t)(length + 1);
    return result;
}

/* The names behind a stretch of marks, read from a file's blanked text a line at a time as
   fingerprints.Normalized.iter_names_between reads them: the identifiers (`_IDENTIFIER`) of each
   line whose normalized line is kept, the first `skip` of them left out, `left` of them in all. */
typedef struct {
    const unsigned char *text;
    Py_ssize_t length;
    const unsigned char *starts; /* 4-byte values, read by memcpy (a buffer need not be aligned):
                                    where each blanked line starts, then one past the last line's end */
    const unsigned char *kept;
    Py_ssize_t lines;
    Py_ssize_t line, skip, left; /* the line read now, names still to skip, names still to give */
    Py_ssize_t at, end;          /* the next character of the line read now, and its end */
} Names;

/* The next name (its start and length), or 0 when there is none left. */
static int next_name(Names *names, const unsigned char **name, Py_ssize_t *length)
{
    while (names->left > 0) {
        if (names->at >= names->end) {
            if (++names->line >= names->lines)
                return 0;
            if (!names->kept[names->line]) {
                names->end = names->at = 0;
                continue;
            }
            /* Its newline left out; starts that are not the text's read no byte outside it. */
            uint32_t start, next;
            memcpy(&start, names->starts + 4 * names->line, 4);
            memcpy(&next, names->starts + 4 * (names->line + 1), 4);
            names->at = start;
            names->end = (Py_ssize_t)next - 1;
            if (names->at > names->length)
                names->at = names->length;
            if (names->end > names->length)
                names->end = names->length;
            continue;
        }
        Py_ssize_t i = names->at, word_end;
        if (!identifier_at(names->text, names->end, i, &word_end)) {
            names->at = i + 1;
            continue;
        }
        Py_ssize_t after = word_end;
        while (after < names->end && (is_word(names->text[after]) || names->text[after] == '$'))
            after++;
        names->at = after;
        if (names->skip > 0) {
            names->skip--;
            continue;
        }
        names->left--;
        *name = names->text + i;
        *length = after - i;
        return 1;
    }
    return 0;
}

/* A map from names to names (spans of the blanked texts), open addressing, grown as it fills (never
   more than half full, so a probe always meets an empty slot), hashed with the interpreter's seeded
   hash of bytes (what `str` keys get), so no text can choose where its names land. */
typedef struct {
    const unsigned char *key, *value;
    Py_ssize_t key_length, value_length;
    Py_hash_t hash;
} Slot;

typedef struct {
    Slot *slots;
    size_t mask, used;
} NameMap;

static int name_map_init(NameMap *map)
{
    map->slots = PyMem_Calloc(16, sizeof(Slot));
    map->mask = 15;
    map->used = 0;
    return map->slots == NULL ? -1 : 0;
}

static int same_name(const unsigned char *a, Py_ssize_t a_length, const unsigned char *b, Py_ssize_t b_length)
{
    return a_length == b_length && memcmp(a, b, (size_t)a_length) == 0;
}

static int name_map_grow(NameMap *map)
{
    size_t size = (map->mask + 1) * 2;
    Slot *slots = PyMem_Calloc(size, sizeof(Slot));
    if (slots == NULL)
        return -1;
    for (size_t k = 0; k <= map->mask; k++) {
        if (map->slots[k].key == NULL)
            continue;
        size_t at = (size_t)map->slots[k].hash & (size - 1);
        while (slots[at].key != NULL)
            at = (at + 1) & (size - 1);
        slots[at] = map->slots[k];
    }
    PyMem_Free(map->slots);
    map->slots = slots;
    map->mask = size - 1;
    return 0;
}

/* `map.setdefault(key, value) == value`, as consistent_renaming asks it; -1 when out of memory. */
static int set_default_agrees(NameMap *map, const unsigned char *key, Py_ssize_t key_length,
                              const unsigned char *value, Py_ssize_t value_length)
{
    Py_hash_t hash = _Py_HashBytes(key, key_length);
    for (size_t at = (size_t)hash & map->mask;; at = (at + 1) & map->mask) {
        Slot *slot = &map->slots[at];
        if (slot->key == NULL) {
            if ((map->used + 1) * 2 > map->mask + 1) {
                if (name_map_grow(map) < 0)
                    return -1;
                return set_default_agrees(map, key, key_length, value, value_length);
            }
            slot->key = key;
            slot->key_length = key_length;
            slot->value = value;
            slot->value_length = value_length;
            slot->hash = hash;
            map->used++;
            return 1;
        }
        if (slot->hash == hash && same_name(slot->key, slot->key_length, key, key_length))
            return same_name(slot->value, slot->value_length, value, value_length);
    }
}

/* Reads a side's arguments (blanked: str, starts: buffer of 4-byte line starts, kept: bytes, line,
   skip, left) into `names`; 0 when the blanked text is not all ASCII (the caller's Python path then
   reads it), -1 on an error. `starts` must hold one more value than `kept` has lines. */
static int names_side(PyObject *const *arguments, Names *names, Py_buffer *starts)
{
    PyObject *blanked = arguments[0], *kept = arguments[2];
    if (!PyUnicode_Check(blanked) || !PyBytes_Check(kept)) {
        PyErr_SetString(PyExc_TypeError, "renaming_share: a side is (blanked: str, starts, kept: bytes, line, skip, left)");
        return -1;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(blanked) < 0)
        return -1;
#endif
    if (!PyUnicode_IS_ASCII(blanked))
        return 0;
    names->line = PyLong_AsSsize_t(arguments[3]);
    names->skip = PyLong_AsSsize_t(arguments[4]);
    names->left = PyLong_AsSsize_t(arguments[5]);
    if (PyErr_Occurred())
        return -1;
    if (PyObject_GetBuffer(arguments[1], starts, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    names->lines = PyBytes_GET_SIZE(kept);
    if (starts->itemsize != 4 || starts->format == NULL || strlen(starts->format) != 1
        || (starts->format[0] != 'I' && starts->format[0] != 'L') || starts->len / 4 != names->lines + 1
        || names->line < 0 || names->skip < 0 || names->left < 0) {
        PyBuffer_Release(starts);
        PyErr_SetString(PyExc_ValueError, "renaming_share: a side's lines, starts or counts do not agree");
        return -1;
    }
    names->text = (const unsigned char *)PyUnicode_DATA(blanked);
    names->length = PyUnicode_GET_LENGTH(blanked);
    names->starts = (const unsigned char *)starts->buf;
    names->kept = (const unsigned char *)PyBytes_AS_STRING(kept);
    /* The line read first is entered as next_name enters every line: one before it, at its end. */
    names->line--;
    names->at = names->end = 0;
    return 1;
}

/* fingerprints.consistent_renaming of the names `mine` and `theirs` give, read lazily and given up
   on as it does: the share into *share; -1 out of memory. */
static int names_share(Names *mine, Names *theirs, double below, Py_ssize_t at_most, double *share)
{
    NameMap forward = {NULL, 0, 0}, backward = {NULL, 0, 0};
    int outcome = -1;
    if (name_map_init(&forward) < 0 || name_map_init(&backward) < 0)
        goto done;
    Py_ssize_t agreeing = 0, disagreeing = 0, size = 0;
    int theirs_left = 1;
    const unsigned char *left_name, *right_name = NULL;
    Py_ssize_t left_length, right_length = 0;
    while (next_name(mine, &left_name, &left_length)) {
        size++;
        theirs_left = theirs_left && next_name(theirs, &right_name, &right_length);
        if (!theirs_left)
            continue; /* pairs end with the shorter side; the share is still of all of mine */
        int agrees = same_name(left_name, left_length, right_name, right_length);
        if (!agrees) {
            agrees = set_default_agrees(&forward, left_name, left_length, right_name, right_length);
            if (agrees > 0)
                agrees = set_default_agrees(&backward, right_name, right_length, left_name, left_length);
            if (agrees < 0)
                goto done;
        }
        if (agrees) {
            agreeing++;
        } else {
            disagreeing++;
            if (at_most && (double)(at_most - disagreeing) / (double)at_most < below) {
                *share = (double)(at_most - disagreeing) / (double)at_most;
                outcome = 0;
                goto done;
            }
        }
    }
    *share = (double)agreeing / (double)(size > 1 ? size : 1);
    outcome = 0;
done:
    PyMem_Free(forward.slots);
    PyMem_Free(backward.slots);
    return outcome;
}

/* renaming_share(mine..., theirs..., below: float, at_most: int) -> float | None: each side six
   arguments (names_side); fingerprints.consistent_renaming of the two sides' names, as it answers
   them read lazily, or None when a blanked text is not all ASCII or `at_most` is outside 0 to 2**53
   (the Python path then answers). */
static PyObject *renaming_share(PyObject *module, PyObject *const *arguments, Py_ssize_t count)
{
    (void)module;
    if (count != 14) {
        PyErr_SetString(PyExc_TypeError, "renaming_share takes two sides of six arguments, below and at_most");
        return NULL;
    }
    double below = PyFloat_AsDouble(arguments[12]);
    Py_ssize_t at_most = PyLong_AsSsize_t(arguments[13]);
    if (PyErr_Occurred())
        return NULL;
    if (at_most < 0 || at_most > ((Py_ssize_t)1 << 53)) /* a share of it would round as Python's would not */
        Py_RETURN_NONE;
    Names mine, theirs;
    Py_buffer mine_starts, their_starts;
    int read = names_side(arguments, &mine, &mine_starts);
    if (read <= 0)
        return read < 0 ? NULL : Py_NewRef(Py_None);
    read = names_side(arguments + 6, &theirs, &their_starts);
    if (read <= 0) {
        PyBuffer_Release(&mine_starts);
        return read < 0 ? NULL : Py_NewRef(Py_None);
    }
    double share;
    PyObject *result = names_share(&mine, &theirs, below, at_most, &share) < 0 ? PyErr_NoMemory()
                                                                               : PyFloat_FromDouble(share);
    PyBuffer_Release(&mine_starts);
    PyBuffer_Release(&their_starts);
    return result;
}

/* reordering.paired_renaming_share compiled: the names of a region compared line by line, each
   line paired with a line of the same normalized text near its place. Asked of every region whose
   names in order disagree (14,500 at Django +304k appended: generated functions share shapes, not
   names), where its Python loops over a few lines and names each were a sixth of the DRY worker's
   CPU. The same steps in the same order as the Python, which stays the definition: it answers where
   a blanked text is not all ASCII or a line's names run out (what Python would then do). */

#define PAIRING_REACH 3 /* reordering.PAIRING_REACH */
#define PARTNERS (2 * PAIRING_REACH + 1)

/* str == str without a call: the same length and kind, the same bytes (unicode_eq's test). */
static int same_line(PyObject *left, PyObject *right)
{
    if (left == right)
        return 1;
    Py_ssize_t length = PyUnicode_GET_LENGTH(left);
    int kind = PyUnicode_KIND(left);
    return length == PyUnicode_GET_LENGTH(right) && kind == PyUnicode_KIND(right)
           && memcmp(PyUnicode_DATA(left), PyUnicode_DATA(right), (size_t)length * (size_t)kind) == 0;
}

/* bisect.bisect_left over `count` sorted 4-byte offsets. */
static Py_ssize_t search_sorted_offsets(const uint32_t *values, Py_ssize_t count, Py_ssize_t value)
{
    Py_ssize_t low = 0, high = count;
    while (low < high) {
        Py_ssize_t middle = low + (high - low) / 2;
        if ((Py_ssize_t)values[middle] < value)
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}

/* The value `key` maps to in `map` (1), or 0 when it maps nothing. */
static int name_map_get(const NameMap *map, const unsigned char *key, Py_ssize_t key_length,
                        const unsigned char **value, Py_ssize_t *value_length)
{
    Py_hash_t hash = _Py_HashBytes(key, key_length);
    for (size_t at = (size_t)hash & map->mask;; at = (at + 1) & map->mask) {
        const Slot *slot = &map->slots[at];
        if (slot->key == NULL)
            return 0;
        if (slot->hash == hash && same_name(slot->key, slot->key_length, key, key_length)) {
            *value = slot->value;
            *value_length = slot->value_length;
            return 1;
        }
    }
}

static void name_map_clear(NameMap *map)
{
    if (map->used) {
        memset(map->slots, 0, (map->mask + 1) * sizeof(Slot));
        map->used = 0;
    }
}

/* One side of the pairing: its normalized lines and where each starts, its names (Names), the
   lines holding text of the region (0-based), and the names of each of them as spans. */
typedef struct {
    PyObject *const *lines;
    Py_ssize_t count;
    const uint32_t *line_starts;
    Names names;
    Py_ssize_t *kept;      /* the region's lines holding text */
    Py_ssize_t kept_count; /* -1: the span does not start and end at line boundaries (None in Python) */
    const unsigned char **name;
    Py_ssize_t *name_length, *first_name; /* a kept line's names: first_name[i] to first_name[i + 1] */
} PairingSide;

static Py_ssize_t marks_in(PyObject *line)
{
    Py_ssize_t marks = 0, length = PyUnicode_GET_LENGTH(line);
    int kind = PyUnicode_KIND(line);
    const void *data = PyUnicode_DATA(line);
    for (Py_ssize_t at = 0; at < length; at++)
        marks += PyUnicode_READ(kind, data, at) == IDENTIFIER_MARK;
    return marks;
}

/* reordering._kept_lines: the region's lines holding text, kept_count -1 when it does not start and
   end at line boundaries; 0 on an error (out of memory, a line not a str). */
static int pairing_kept_lines(PairingSide *side, Py_ssize_t start, Py_ssize_t end)
{
    side->kept_count = -1;
    Py_ssize_t first = search_sorted_offsets(side->line_starts, side->count, start);
    if (first == side->count || (Py_ssize_t)side->line_starts[first] != start)
        return 1;
    Py_ssize_t stop = search_sorted_offsets(side->line_starts, side->count, end);
    side->kept = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(stop > first ? stop - first : 1));
    if (side->kept == NULL) {
        PyErr_NoMemory();
        return 0;
    }
    Py_ssize_t kept = 0;
    for (Py_ssize_t index = first; index < stop; index++) {
        if (!PyUnicode_Check(side->lines[index])) {
            PyErr_SetString(PyExc_TypeError, "paired_renaming_share: a side's lines are a tuple of str");
            return 0;
        }
        if (PyUnicode_GET_LENGTH(side->lines[index]) > 0)
            side->kept[kept++] = index;
    }
    if (kept && (Py_ssize_t)side->line_starts[side->kept[kept - 1]] + PyUnicode_GET_LENGTH(side->lines[side->kept[kept - 1]]) > end)
        return 1;
    side->kept_count = kept;
    return 1;
}

/* The names of each kept line, as Normalized.line_names reads them: 1, 0 when a line's names run
   out before its marks (the Python path answers), -1 out of memory. */
static int pairing_names(PairingSide *side)
{
    Py_ssize_t total = 0;
    side->first_name = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(side->kept_count + 1));
    if (side->first_name == NULL)
        return -1;
    for (Py_ssize_t line = 0; line < side->kept_count; line++) {
        side->first_name[line] = total;
        total += marks_in(side->lines[side->kept[line]]);
    }
    side->first_name[side->kept_count] = total;
    side->name = PyMem_Malloc(sizeof(*side->name) * (size_t)(total ? total : 1));
    side->name_length = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(total ? total : 1));
    if (side->name == NULL || side->name_length == NULL)
        return -1;
    for (Py_ssize_t line = 0; line < side->kept_count; line++) {
        Names reader = side->names;
        reader.line = side->kept[line] - 1; /* entered as next_name enters every line */
        reader.at = reader.end = 0;
        reader.skip = 0;
        reader.left = side->first_name[line + 1] - side->first_name[line];
        for (Py_ssize_t at = side->first_name[line]; at < side->first_name[line + 1]; at++)
            if (!next_name(&reader, &side->name[at], &side->name_length[at]))
                return 0;
    }
    return 1;
}

/* reordering._agreeing of my line `mine` and their line `theirs`: into `forward` and `backward`
   themselves when keeping (Python's maps updated with what the pairs add: the same lookups, as a
   pair never changes what a name already maps to), else into `added_forward`/`added_backward`
   looked up after them. The count, or -1 out of memory. */
static Py_ssize_t pairing_agreeing(const PairingSide *mine_side, Py_ssize_t mine, const PairingSide *their_side,
                                   Py_ssize_t theirs, NameMap *forward, NameMap *backward, NameMap *added_forward,
                                   NameMap *added_backward, int keep)
{
    NameMap *into_forward = keep ? forward : added_forward, *into_backward = keep ? backward : added_backward;
    if (!keep) {
        name_map_clear(added_forward);
        name_map_clear(added_backward);
    }
    Py_ssize_t agreeing = 0, right_at = their_side->first_name[theirs];
    for (Py_ssize_t left_at = mine_side->first_name[mine]; left_at < mine_side->first_name[mine + 1]; left_at++, right_at++) {
        const unsigned char *left = mine_side->name[left_at], *right = their_side->name[right_at];
        Py_ssize_t left_length = mine_side->name_length[left_at], right_length = their_side->name_length[right_at];
        if (same_name(left, left_length, right, right_length)) {
            agreeing++;
            continue;
        }
        const unsigned char *mapped, *mapped_back;
        Py_ssize_t mapped_length, mapped_back_length;
        int has = name_map_get(forward, left, left_length, &mapped, &mapped_length)
                  || (!keep && name_map_get(added_forward, left, left_length, &mapped, &mapped_length));
        int has_back = name_map_get(backward, right, right_length, &mapped_back, &mapped_back_length)
                       || (!keep && name_map_get(added_backward, right, right_length, &mapped_back, &mapped_back_length));
        if ((!has || same_name(mapped, mapped_length, right, right_length))
            && (!has_back || same_name(mapped_back, mapped_back_length, left, left_length))) {
            agreeing++;
            if (set_default_agrees(into_forward, left, left_length, right, right_length) < 0
                || set_default_agrees(into_backward, right, right_length, left, left_length) < 0)
                return -1;
        }
    }
    return agreeing;
}

static int pairing_side(PyObject *const *arguments, PairingSide *side, Py_buffer *line_starts, Py_buffer *blanked_starts)
{
    /* lines, line_starts, then names_side's (blanked, blanked starts, kept, and a line, skip and
       left it is not asked here: 0, 0, 0), then start, end */
    if (!PyTuple_Check(arguments[0])) {
        PyErr_SetString(PyExc_TypeError, "paired_renaming_share: a side's lines are a tuple of str");
        return -1;
    }
    side->lines = &PyTuple_GET_ITEM(arguments[0], 0);
    side->count = PyTuple_GET_SIZE(arguments[0]);
    if (PyObject_GetBuffer(arguments[1], line_starts, PyBUF_SIMPLE) < 0)
        return -1;
    side->line_starts = line_starts->buf;
    if (line_starts->len != side->count * (Py_ssize_t)sizeof(uint32_t)) {
        PyErr_SetString(PyExc_ValueError, "paired_renaming_share: a side's line starts are not one 4-byte offset a line");
        return -1;
    }
    PyObject *names_arguments[6] = {arguments[2], arguments[3], arguments[4], NULL, NULL, NULL};
    PyObject *zero = PyLong_FromLong(0);
    if (zero == NULL)
        return -1;
    names_arguments[3] = names_arguments[4] = names_arguments[5] = zero;
    int read = names_side(names_arguments, &side->names, blanked_starts);
    Py_DECREF(zero);
    if (read > 0 && side->names.lines != side->count) {
        PyErr_SetString(PyExc_ValueError, "paired_renaming_share: a side's kept lines are not one a line");
        return -1;
    }
    return read;
}

/* The pairing of two sides read (pairing_side, `read` its answers: 0 where a blanked text is not all
   ASCII) over the regions `mine_start`..`mine_end` and `their_start`..`their_end`: the share, None,
   or NotImplemented where the Python path must answer; NULL on an error. Frees what it allocates
   in the sides, not their buffers. */
static PyObject *pairing_of(PairingSide *sides, const int *read, Py_ssize_t mine_start, Py_ssize_t mine_end,
                            Py_ssize_t their_start, Py_ssize_t their_end, double below, Py_ssize_t names_total)
{
    PyObject *result = NULL;
    NameMap maps[4] = {{NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}};
    Py_ssize_t (*partners)[PARTNERS] = NULL;
    int *partner_count = NULL;
    unsigned char *used = NULL;
    if (!pairing_kept_lines(&sides[0], mine_start, mine_end) || !pairing_kept_lines(&sides[1], their_start, their_end))
        goto done;
    PairingSide *mine = &sides[0], *theirs = &sides[1];
    Py_ssize_t lines = mine->kept_count;
    if (lines <= 0 || theirs->kept_count != lines) {
        result = Py_NewRef(Py_None);
        goto done;
    }
#define MINE_TEXT(line) (mine->lines[mine->kept[line]])
#define THEIR_TEXT(line) (theirs->lines[theirs->kept[line]])
    int same_texts = 1, near_twin = 0;
    for (Py_ssize_t line = 0; line < lines && same_texts; line++)
        same_texts = same_line(MINE_TEXT(line), THEIR_TEXT(line));
    for (Py_ssize_t distance = 1; distance <= PAIRING_REACH && same_texts && !near_twin; distance++)
        for (Py_ssize_t line = 0; line + distance < lines && !near_twin; line++)
            near_twin = same_line(MINE_TEXT(line), MINE_TEXT(line + distance));
    if (same_texts && !near_twin) {
        result = Py_NewRef(Py_None); /* most regions: the same lines, none with a line of its text near it */
        goto done;
    }
    partners = PyMem_Malloc(sizeof(*partners) * (size_t)lines);
    partner_count = PyMem_Calloc((size_t)lines, sizeof(int));
    used = PyMem_Calloc((size_t)lines, 1);
    if (partners == NULL || partner_count == NULL || used == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    /* Each line's partners: their lines of its text at most PAIRING_REACH away, the nearest first,
       the earlier of two as near first. */
    int only_in_place = 1;
    for (Py_ssize_t line = 0; line < lines; line++) {
        for (Py_ssize_t distance = 0; distance <= PAIRING_REACH; distance++)
            for (int sign = -1; sign <= 1; sign += 2) {
                Py_ssize_t other = line + sign * distance;
                if ((distance == 0 && sign > 0) || other < 0 || other >= lines)
                    continue;
                if (same_line(MINE_TEXT(line), THEIR_TEXT(other)))
                    partners[line][partner_count[line]++] = other;
            }
        only_in_place = only_in_place && partner_count[line] == 1 && partners[line][0] == line;
    }
#undef MINE_TEXT
#undef THEIR_TEXT
    if (only_in_place) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (read[0] == 0 || read[1] == 0) { /* a blanked text not all ASCII */
        result = Py_NewRef(Py_NotImplemented);
        goto done;
    }
    for (int side = 0; side < 2; side++) {
        int named = pairing_names(&sides[side]);
        if (named <= 0) {
            result = named < 0 ? PyErr_NoMemory() : Py_NewRef(Py_NotImplemented);
            goto done;
        }
    }
    for (int map = 0; map < 4; map++)
        if (name_map_init(&maps[map]) < 0) {
            PyErr_NoMemory();
            goto done;
        }
    Py_ssize_t agreeing = 0, disagreeing = 0;
    for (Py_ssize_t line = 0; line < lines; line++) {
        Py_ssize_t best = -1, best_agreeing = -1;
        for (int candidate = 0; candidate < partner_count[line]; candidate++) {
            Py_ssize_t partner = partners[line][candidate];
            if (used[partner])
                continue;
            Py_ssize_t agreed = pairing_agreeing(mine, line, theirs, partner, &maps[0], &maps[1], &maps[2], &maps[3], 0);
            if (agreed < 0) {
                PyErr_NoMemory();
                goto done;
            }
            if (agreed > best_agreeing) {
                best = partner;
                best_agreeing = agreed;
            }
        }
        if (best < 0) {
            result = Py_NewRef(Py_None); /* a line with no partner left near its place: not a reordering */
            goto done;
        }
        used[best] = 1;
        Py_ssize_t agreed = pairing_agreeing(mine, line, theirs, best, &maps[0], &maps[1], &maps[2], &maps[3], 1);
        if (agreed < 0) {
            PyErr_NoMemory();
            goto done;
        }
        agreeing += agreed;
        disagreeing += mine->first_name[line + 1] - mine->first_name[line] - agreed;
        if (names_total && (double)(names_total - disagreeing) / (double)names_total < below) {
            result = PyFloat_FromDouble((double)(names_total - disagreeing) / (double)names_total);
            goto done;
        }
    }
    result = PyFloat_FromDouble((double)agreeing / (double)(agreeing + disagreeing > 1 ? agreeing + disagreeing : 1));
done:
    for (int side = 0; side < 2; side++) {
        PyMem_Free(sides[side].kept);
        PyMem_Free(sides[side].first_name);
        PyMem_Free((void *)sides[side].name);
        PyMem_Free(sides[side].name_length);
        sides[side].kept = NULL;
        sides[side].first_name = sides[side].name_length = NULL;
        sides[side].name = NULL;
    }
    for (int map = 0; map < 4; map++)
        PyMem_Free(maps[map].slots);
    PyMem_Free(partners);
    PyMem_Free(partner_count);
    PyMem_Free(used);
    return result;
}

/* paired_renaming_share(mine (7), theirs (7), below, names_total) -> float | None | NotImplemented:
   each side its normalized lines, their starts, its blanked text, its lines' starts there, which
   lines hold text (bytes), and the region's start and end; reordering.paired_renaming_share's
   answer, or NotImplemented where its Python path must answer. */
static PyObject *paired_renaming_share(PyObject *module, PyObject *const *arguments, Py_ssize_t count)
{
    (void)module;
    if (count != 16) {
        PyErr_SetString(PyExc_TypeError, "paired_renaming_share takes two sides of seven arguments, below and names_total");
        return NULL;
    }
    double below = PyFloat_AsDouble(arguments[14]);
    Py_ssize_t names_total = PyLong_AsSsize_t(arguments[15]);
    Py_ssize_t mine_start = PyLong_AsSsize_t(arguments[5]), mine_end = PyLong_AsSsize_t(arguments[6]);
    Py_ssize_t their_start = PyLong_AsSsize_t(arguments[12]), their_end = PyLong_AsSsize_t(arguments[13]);
    if (PyErr_Occurred())
        return NULL;
    PyObject *result = NULL;
    PairingSide sides[2] = {{0}, {0}};
    Py_buffer buffers[4] = {{0}, {0}, {0}, {0}};
    int read[2];
    for (int side = 0; side < 2; side++) {
        read[side] = pairing_side(arguments + 7 * side, &sides[side], &buffers[2 * side], &buffers[2 * side + 1]);
        if (read[side] < 0)
            goto done;
    }
    result = pairing_of(sides, read, mine_start, mine_end, their_start, their_end, below, names_total);
done:
    for (int buffer = 0; buffer < 4; buffer++)
        if (buffers[buffer].obj != NULL)
            PyBuffer_Release(&buffers[buffer]);
    return result;
}

/* The marks in text[start:end] (one byte a character), as str.count counts them: the span cut to the text. */
static Py_ssize_t marks_between(const unsigned char *text, Py_ssize_t length, Py_ssize_t start, Py_ssize_t end)
{
    Py_ssize_t marks = 0;
    if (end > length)
        end = length;
    for (Py_ssize_t at = start; at < end; at++)
        marks += text[at] == IDENTIFIER_MARK;
    return marks;
}

/* One side of renamed_consistently: (text, lines, line_starts, blanked, blanked_starts, kept), a
   Normalized's `judging_side`, and the region's start and end in `text`. Fills the pairing side
   (its lines, their starts and its names, the names read from the region on: fingerprints.
   Normalized._names_from's line, skip and count) and `marks`, the region's marks; 1, 0 when a text
   is not all ASCII or the region is not one (the Python path answers), -1 on an error. */
static int judging_side(PyObject *const *arguments, Py_ssize_t start, Py_ssize_t end, PairingSide *side,
                        Py_buffer *line_starts, Py_buffer *blanked_starts, Py_ssize_t *marks)
{
    PyObject *text = arguments[0], *lines = arguments[1], *blanked = arguments[3], *kept = arguments[5];
    if (!PyUnicode_Check(text) || !PyTuple_Check(lines) || !PyUnicode_Check(blanked) || !PyBytes_Check(kept)) {
        PyErr_SetString(PyExc_TypeError,
                        "renamed_consistently: a side is (text: str, lines: tuple, line starts, blanked: str, starts, kept: bytes)");
        return -1;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0 || PyUnicode_READY(blanked) < 0)
        return -1;
#endif
    if (!PyUnicode_IS_ASCII(text) || !PyUnicode_IS_ASCII(blanked))
        return 0;
    side->lines = &PyTuple_GET_ITEM(lines, 0);
    side->count = PyTuple_GET_SIZE(lines);
    if (PyObject_GetBuffer(arguments[2], line_starts, PyBUF_SIMPLE) < 0)
        return -1;
    side->line_starts = line_starts->buf;
    if (PyObject_GetBuffer(arguments[4], blanked_starts, PyBUF_SIMPLE) < 0)
        return -1;
    Names *names = &side->names;
    names->text = (const unsigned char *)PyUnicode_DATA(blanked);
    names->length = PyUnicode_GET_LENGTH(blanked);
    names->starts = blanked_starts->buf;
    names->kept = (const unsigned char *)PyBytes_AS_STRING(kept);
    names->lines = PyBytes_GET_SIZE(kept);
    if (line_starts->len != side->count * (Py_ssize_t)sizeof(uint32_t) || names->lines != side->count
        || blanked_starts->len != (side->count + 1) * (Py_ssize_t)sizeof(uint32_t)) {
        PyErr_SetString(PyExc_ValueError, "renamed_consistently: a side's lines and starts do not agree");
        return -1;
    }
    /* No region starts before the first line, counts from the text's end or at the largest offset
       (one past it is searched for): Python answers those. */
    if (side->count == 0 || start < 0 || end < 0 || start == PY_SSIZE_T_MAX
        || (Py_ssize_t)side->line_starts[0] > start)
        return 0;
    const unsigned char *normalized = (const unsigned char *)PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    /* bisect.bisect_right(line_starts, start) - 1: the line holding the region's start */
    Py_ssize_t line = search_sorted_offsets(side->line_starts, side->count, start + 1) - 1;
    names->skip = marks_between(normalized, length, side->line_starts[line], start);
    names->left = *marks = marks_between(normalized, length, start, end);
    names->line = line - 1; /* entered as next_name enters every line */
    names->at = names->end = 0;
    return 1;
}

/* renamed_consistently(mine (6), theirs (6), start, end, other_start, other_end, below) -> bool |
   NotImplemented: reordering.renamed_consistently, asked of every region judged (15,000 at Django
   +304k appended), in one call reading the offsets itself where Python built each check's
   arguments (a bisection and two counts a side) at about the cost of the check: the names in order
   (names_share), then, below `below`, paired line by line (pairing_of). NotImplemented where a
   text is not all ASCII, a region is negative, or the pairing leaves it to Python. */
static PyObject *renamed_consistently(PyObject *module, PyObject *const *arguments, Py_ssize_t count)
{
    (void)module;
    if (count != 17) {
        PyErr_SetString(PyExc_TypeError, "renamed_consistently takes two sides of six arguments, two regions and below");
        return NULL;
    }
    Py_ssize_t mine_start = PyLong_AsSsize_t(arguments[12]), mine_end = PyLong_AsSsize_t(arguments[13]);
    Py_ssize_t their_start = PyLong_AsSsize_t(arguments[14]), their_end = PyLong_AsSsize_t(arguments[15]);
    double below = PyFloat_AsDouble(arguments[16]);
    if (PyErr_Occurred())
        return NULL;
    PyObject *result = NULL;
    PairingSide sides[2] = {{0}, {0}};
    Py_buffer buffers[4] = {{0}, {0}, {0}, {0}};
    Py_ssize_t marks[2];
    int read[2] = {1, 1};
    for (int side = 0; side < 2; side++) {
        read[side] = judging_side(arguments + 6 * side, side ? their_start : mine_start, side ? their_end : mine_end,
                                  &sides[side], &buffers[2 * side], &buffers[2 * side + 1], &marks[side]);
        if (read[side] <= 0) {
            result = read[side] < 0 ? NULL : Py_NewRef(Py_NotImplemented);
            goto done;
        }
    }
    Py_ssize_t at_most = marks[0]; /* fingerprints.renaming_share's `at_most`, the pairing's `names_total` */
    if (at_most > ((Py_ssize_t)1 << 53)) { /* a share of it would round as Python's would not */
        result = Py_NewRef(Py_NotImplemented);
        goto done;
    }
    double share;
    Names mine_names = sides[0].names, their_names = sides[1].names; /* read on; the sides' stay as they start */
    if (names_share(&mine_names, &their_names, below, at_most, &share) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    if (share >= below) {
        result = Py_NewRef(Py_True);
        goto done;
    }
    PyObject *paired = pairing_of(sides, read, mine_start, mine_end, their_start, their_end, below, at_most);
    if (paired == NULL || paired == Py_NotImplemented) {
        result = paired;
        goto done;
    }
    result = PyBool_FromLong(paired != Py_None && PyFloat_AS_DOUBLE(paired) >= below);
    Py_DECREF(paired);
done:
    for (int buffer = 0; buffer < 4; buffer++)
        if (buffers[buffer].obj != NULL)
            PyBuffer_Release(&buffers[buffer]);
    return result;
}

/* fingerprints.Normalized.line_at, 0-based: the line whose normalized text holds `offset` (an empty
   line shares its offset with the next line holding text); -1 before the first line, -2 when a line
   is not a str. */
static Py_ssize_t line_holding(const PairingSide *side, Py_ssize_t offset)
{
    Py_ssize_t index = search_sorted_offsets(side->line_starts, side->count, offset + 1) - 1;
    if (index < 0)
        return -1;
    for (;; index++) {
        if (!PyUnicode_Check(side->lines[index]))
            return -2;
        if (index + 1 >= side->count || PyUnicode_GET_LENGTH(side->lines[index]) > 0)
            return index;
    }
}

/* Whether line `number` is in `added`: between `first` and `stop` when `bounded` (a range of step
   1), else asked of the container; -1 on an error. */
/* Whether a compiled pattern's bound `search` finds anything in `text`: 1, 0, or -1 with an error set. */
static int pattern_matches(PyObject *search, PyObject *text)
{
    PyObject *match = PyObject_CallOneArg(search, text);
    if (match == NULL)
        return -1;
    int found = PyObject_IsTrue(match);
    Py_DECREF(match);
    return found;
}

static int is_added(PyObject *added, int bounded, Py_ssize_t first, Py_ssize_t stop, Py_ssize_t number)
{
    if (bounded)
        return first <= number && number < stop;
    PyObject *key = PyLong_FromSsize_t(number);
    if (key == NULL)
        return -1;
    int found = PySequence_Contains(added, key);
    Py_DECREF(key);
    return found;
}

/* A range's start and stop when its step is 1 and they fit: 1, else 0 (the caller asks the
   container); -1 on an error. */
static int range_bounds(PyObject *added, Py_ssize_t *first, Py_ssize_t *stop)
{
    if (!PyRange_Check(added))
        return 0;
    Py_ssize_t values[3];
    const char *names[3] = {"step", "start", "stop"};
    for (int k = 0; k < 3; k++) {
        PyObject *value = PyObject_GetAttrString(added, names[k]);
        if (value == NULL)
            return -1;
        values[k] = PyLong_AsSsize_t(value);
        Py_DECREF(value);
        if (values[k] == -1 && PyErr_Occurred()) {
            PyErr_Clear(); /* past 8 bytes */
            return 0;
        }
    }
    *first = values[1];
    *stop = values[2];
    return values[0] == 1;
}

/* sized_and_renamed(mine (6), theirs (6), start, end, other_start, other_end, below, added, min_lines)
   -> bool | NotImplemented: duplicates.sized_and_renamed, the checks most regions judged fail, in
   one call: the region's lines holding text and those of them `added` holds (at least `min_lines`,
   at least half), then renamed_consistently's. NotImplemented where that leaves it to Python or
   the region ends before the first line. */
static PyObject *sized_and_renamed(PyObject *module, PyObject *const *arguments, Py_ssize_t count)
{
    if (count != 19) {
        PyErr_SetString(PyExc_TypeError, "sized_and_renamed takes two sides of six arguments, two regions, below, added and min_lines");
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(arguments[12]), end = PyLong_AsSsize_t(arguments[13]);
    Py_ssize_t min_lines = PyLong_AsSsize_t(arguments[18]);
    if (PyErr_Occurred())
        return NULL;
    PyObject *lines = arguments[1], *added = arguments[17];
    if (!PyTuple_Check(lines) || !PyUnicode_Check(arguments[0])) {
        PyErr_SetString(PyExc_TypeError, "sized_and_renamed: a side is (text: str, lines: tuple, ...)");
        return NULL;
    }
    PairingSide side = {0};
    Py_buffer line_starts = {0};
    side.lines = &PyTuple_GET_ITEM(lines, 0);
    side.count = PyTuple_GET_SIZE(lines);
    if (PyObject_GetBuffer(arguments[2], &line_starts, PyBUF_SIMPLE) < 0)
        return NULL;
    side.line_starts = line_starts.buf;
    PyObject *result = NULL;
    if (line_starts.len != side.count * (Py_ssize_t)sizeof(uint32_t)) {
        PyErr_SetString(PyExc_ValueError, "sized_and_renamed: a side's lines and starts do not agree");
        goto done;
    }
    Py_ssize_t first = start < 0 || start == PY_SSIZE_T_MAX ? -1 : line_holding(&side, start);
    Py_ssize_t last = end < 1 ? -1 : line_holding(&side, end - 1);
    if (first == -2 || last == -2) {
        PyErr_SetString(PyExc_TypeError, "sized_and_renamed: a side's lines are a tuple of str");
        goto done;
    }
    if (first < 0 || last < 0) { /* Python reads such offsets from the other end */
        result = Py_NewRef(Py_NotImplemented);
        goto done;
    }
    Py_ssize_t added_first = 0, added_stop = 0;
    int bounded = range_bounds(added, &added_first, &added_stop);
    if (bounded < 0)
        goto done;
    Py_ssize_t kept = 0, added_count = 0;
    for (Py_ssize_t index = first; index <= last; index++) {
        if (!PyUnicode_Check(side.lines[index])) {
            PyErr_SetString(PyExc_TypeError, "sized_and_renamed: a side's lines are a tuple of str");
            goto done;
        }
        if (PyUnicode_GET_LENGTH(side.lines[index]) == 0)
            continue;
        kept++;
        int in = is_added(added, bounded, added_first, added_stop, index + 1);
        if (in < 0)
            goto done;
        added_count += in;
    }
    if (added_count < min_lines || added_count * 2 < kept) {
        result = Py_NewRef(Py_False);
        goto done;
    }
    result = renamed_consistently(module, arguments, 17);
done:
    PyBuffer_Release(&line_starts);
    return result;
}

/* How many characters `text` starts with that str.isspace (and `\s`) counts, and whether that is all of it. */
static Py_ssize_t leading_space(PyObject *text, int *blank)
{
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), at = 0;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    while (at < length && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, at)))
        at++;
    *blank = at == length;
    return at;
}

/* definition_members(lines, search, accessor, first_word, second_word) -> list[tuple[int, int]]:
   rules._members compiled, for a file's source lines: the same pass with the definitions still open
   on a stack, `search` (the language's definition pattern's) asked only of lines holding one of the
   two words, `accessor` (or None) of every line, then each definition's decorators. The Families
   of each changed file with a copy reported ran it over the whole file in Python (164,000 lines at
   Django +304k appended). */
static PyObject *definition_members(PyObject *module, PyObject *const *arguments, Py_ssize_t count)
{
    (void)module;
    if (count != 5 || !PyUnicode_Check(arguments[3]) || !PyUnicode_Check(arguments[4])) {
        PyErr_SetString(PyExc_TypeError, "definition_members(lines, search, accessor, first_word: str, second_word: str)");
        return NULL;
    }
    PyObject *sequence = PySequence_Tuple(arguments[0]); /* its own: the calls below cannot change it */
    if (sequence == NULL)
        return NULL;
    PyObject *search = arguments[1], *accessor = arguments[2] == Py_None ? NULL : arguments[2];
    PyObject *first_word = arguments[3], *second_word = arguments[4];
    Py_ssize_t lines = PyTuple_GET_SIZE(sequence);
    PyObject **items = &PyTuple_GET_ITEM(sequence, 0);
    PyObject *result = NULL;
    /* open_depth/open_line: the stack; end_depth/end_last by opening line, end_last -1 while none */
    Py_ssize_t *open_depth = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(lines ? lines : 1));
    Py_ssize_t *open_line = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(lines ? lines : 1));
    Py_ssize_t *end_depth = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(lines ? lines : 1));
    Py_ssize_t *end_last = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(lines ? lines : 1));
    if (open_depth == NULL || open_line == NULL || end_depth == NULL || end_last == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t index = 0; index < lines; index++) {
        if (!PyUnicode_Check(items[index])) {
            PyErr_SetString(PyExc_TypeError, "definition_members: lines are a list of str");
            goto done;
        }
        end_last[index] = -1;
    }
    Py_ssize_t opened = 0, last_seen = -1;
    for (Py_ssize_t index = 0; index < lines; index++) {
        PyObject *text = items[index];
        int blank;
        Py_ssize_t depth = leading_space(text, &blank);
        if (blank) /* a blank line closes nothing */
            continue;
        if (opened && depth <= open_depth[opened - 1]) {
            Py_UCS4 first = PyUnicode_READ_CHAR(text, depth);
            Py_ssize_t closing = first == '}' || first == ')' ? index : last_seen;
            while (opened && depth <= open_depth[opened - 1]) {
                opened--;
                end_depth[open_line[opened]] = open_depth[opened];
                end_last[open_line[opened]] = closing;
            }
        }
        int defines = 0;
        int has_word = PyUnicode_Contains(text, first_word);
        if (has_word == 0)
            has_word = PyUnicode_Contains(text, second_word);
        if (has_word < 0)
            goto done;
        if (has_word && (defines = pattern_matches(search, text)) < 0)
            goto done;
        if (!defines && accessor != NULL && (defines = pattern_matches(accessor, text)) < 0)
            goto done;
        if (defines) {
            open_depth[opened] = depth;
            open_line[opened++] = index;
        }
        last_seen = index;
    }
    for (Py_ssize_t k = 0; k < opened; k++) {
        end_depth[open_line[k]] = open_depth[k];
        end_last[open_line[k]] = last_seen;
    }
    result = PyList_New(0);
    if (result == NULL)
        goto done;
    for (Py_ssize_t index = 0; index < lines; index++) {
        if (end_last[index] < 0)
            continue;
        Py_ssize_t first = index;
        while (first > 0) { /* a decorator (`^\s*@`) as deep as the definition */
            int blank;
            Py_ssize_t indent = leading_space(items[first - 1], &blank);
            if (blank || PyUnicode_READ_CHAR(items[first - 1], indent) != '@' || indent != end_depth[index])
                break;
            first--;
        }
        PyObject *member = Py_BuildValue("(nn)", first + 1, end_last[index] + 1);
        if (member == NULL || PyList_Append(result, member) < 0) {
            Py_XDECREF(member);
            Py_CLEAR(result);
            goto done;
        }
        Py_DECREF(member);
    }
done:
    PyMem_Free(open_depth);
    PyMem_Free(open_line);
    PyMem_Free(end_depth);
    PyMem_Free(end_last);
    Py_DECREF(sequence);
    return result;
}

static PyMethodDef methods[] = {
    {"set_keywords", (PyCFunction)set_keywords, METH_O, "Set the words the normalization keeps as written."},
    {"normalize", (PyCFunction)(void (*)(void))normalize, METH_FASTCALL,
     "normalize(source, family) -> (blanked, lines), lines None when the blanked text is not all ASCII."},
    {"anchor_hashes", (PyCFunction)(void (*)(void))anchor_hashes, METH_FASTCALL,
     "anchor_hashes(data, family) -> the line-start window hashes as 4-byte integers, or None."},
    {"window_hashes", (PyCFunction)window_hashes, METH_VARARGS,
     "window_hashes(data, offsets) -> the hashes of the windows at 4-byte offsets, as 4-byte integers."},
    {"consecutive_offsets", (PyCFunction)consecutive_offsets, METH_VARARGS,
     "consecutive_offsets(start, stop) -> the 4-byte offsets start to stop - 1, as bytes."},
    {"line_starts", (PyCFunction)line_starts, METH_O,
     "line_starts(text) -> where each line starts and one past the end, as 4-byte offsets, or None."},
    {"renaming_share", (PyCFunction)(void (*)(void))renaming_share, METH_FASTCALL,
     "renaming_share(mine (6), theirs (6), below, at_most) -> consistent_renaming's share, or None."},
    {"paired_renaming_share", (PyCFunction)(void (*)(void))paired_renaming_share, METH_FASTCALL,
     "paired_renaming_share(mine (7), theirs (7), below, names_total) -> the paired share, None, or NotImplemented."},
    {"renamed_consistently", (PyCFunction)(void (*)(void))renamed_consistently, METH_FASTCALL,
     "renamed_consistently(mine (6), theirs (6), start, end, other_start, other_end, below) -> bool or NotImplemented."},
    {"sized_and_renamed", (PyCFunction)(void (*)(void))sized_and_renamed, METH_FASTCALL,
     "sized_and_renamed(mine (6), theirs (6), start, end, other_start, other_end, below, added, min_lines) -> bool or NotImplemented."},
    {"definition_members", (PyCFunction)(void (*)(void))definition_members, METH_FASTCALL,
     "definition_members(lines, search, accessor, first_word, second_word) -> rules._members' (first, last) lines."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_normalize", "The DRY lens's normalization, compiled (fingerprints.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__normalize(void)
{
    /* The constants it was built with, which fingerprints.py compares with its own before using it. */
    PyObject *module = PyModule_Create(&module_definition);
    if (module == NULL)
        return NULL;
    if (PyModule_AddIntConstant(module, "WINDOW", WINDOW) < 0
        || PyModule_AddIntConstant(module, "MAX_LINE_LENGTH", MAX_LINE_LENGTH) < 0
        || PyModule_AddIntConstant(module, "IDENTIFIER_MARK", IDENTIFIER_MARK) < 0
        || PyModule_AddIntConstant(module, "PAIRING_REACH", PAIRING_REACH) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    PyObject *base = PyLong_FromUnsignedLongLong(BASE);
    if (base == NULL || PyModule_AddObject(module, "BASE", base) < 0) {
        Py_XDECREF(base);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
