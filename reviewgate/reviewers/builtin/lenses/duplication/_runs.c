/* The DRY search's inner loop (runs.regions_found) as one loop over the places, for texts of one
   byte a character (almost every change).

   runs.py holds the definition, over numpy arrays: every place of the tree that a window of the
   added code shares, the shared run through it, one run per maximal run of an alignment, grown
   backwards, cut to whole lines, the longest first. This gives the same runs in the same order, or
   runs.py's path runs where it was not built; tests/test_compiled_runs.py compares the two.

   Before it, the same file compiles what feeds it: the hashes the added code and the tree share
   (runs.shared_of), the windows of the added code holding one (runs.shared_windows) and the table
   of the tree's places sorted by hash (runs.PlaceTable.of), through an open-addressing table of
   hashes; tests/test_dry_runs.py compares each with its Python definition. After it, the growth
   of each region judged over statements put in another order (reordering.py);
   tests/test_dry_reordering_compiled.py compares it with its Python definition.

   Its arrays come from the gate (the changed file's windows, the tree's table of places, the
   normalized texts); every index read from one is checked against the array it indexes, and a
   run is never grown past its file's text. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PREFETCH 4 /* places ahead */

typedef struct {
    Py_ssize_t mine_offset, other, other_offset, forward, back_limit;
    int behind;
} Place;

typedef struct {
    Py_ssize_t length, start, other_start, other, order;
} Run;

/* How many bytes agree from a and b onwards, at most `limit`: 8 at a time, then one by one. */
static Py_ssize_t agreeing_forward(const uint8_t *a, const uint8_t *b, Py_ssize_t limit)
{
    Py_ssize_t k = 0;
    for (; k + 8 <= limit; k += 8) {
        uint64_t x, y;
        memcpy(&x, a + k, 8);
        memcpy(&y, b + k, 8);
        if (x != y)
            break;
    }
    while (k < limit && a[k] == b[k])
        k++;
    return k;
}

/* How many bytes agree before a and b, nearest first, at most `limit`. */
static Py_ssize_t agreeing_backward(const uint8_t *a, const uint8_t *b, Py_ssize_t limit)
{
    Py_ssize_t k = 0;
    while (k < limit && a[-1 - k] == b[-1 - k])
        k++;
    return k;
}

/* The first of `count` sorted values that is at least (`after` false) or greater than (`after`
   true) `value`: numpy's searchsorted, left and right. */
static Py_ssize_t search_sorted(const uint32_t *values, Py_ssize_t count, Py_ssize_t value, int after)
{
    Py_ssize_t low = 0, high = count;
    while (low < high) {
        Py_ssize_t middle = low + (high - low) / 2;
        if ((Py_ssize_t)values[middle] < value || (after && (Py_ssize_t)values[middle] == value))
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}

/* Where `hash` is among `count` sorted distinct hashes, or -1. */
static Py_ssize_t find_hash(const uint32_t *hashes, Py_ssize_t count, uint32_t hash)
{
    Py_ssize_t position = search_sorted(hashes, count, hash, 0);
    return position < count && hashes[position] == hash ? position : -1;
}

/* The runs seen, by (other file, alignment, end): the first place of each is the one grown. */
typedef struct {
    Py_ssize_t other, alignment, end;
    int used;
} Key;

static uint64_t key_hash(Py_ssize_t other, Py_ssize_t alignment, Py_ssize_t end)
{
    uint64_t hash = (uint64_t)other * 0x9E3779B97F4A7C15ULL;
    hash ^= (uint64_t)alignment * 0xC2B2AE3D27D4EB4FULL + (hash << 6) + (hash >> 2);
    hash ^= (uint64_t)end * 0x165667B19E3779F9ULL + (hash << 6) + (hash >> 2);
    return hash ^ (hash >> 29);
}

/* Whether the key was not seen yet (and now is). `mask` is the table's size less one. */
static int first_of_run(Key *table, uint64_t mask, Py_ssize_t other, Py_ssize_t alignment, Py_ssize_t end)
{
    for (uint64_t slot = key_hash(other, alignment, end) & mask;; slot = (slot + 1) & mask) {
        Key *key = &table[slot];
        if (!key->used) {
            *key = (Key){other, alignment, end, 1};
            return 1;
        }
        if (key->other == other && key->alignment == alignment && key->end == end)
            return 0;
    }
}

static int longest_first(const void *left, const void *right)
{
    const Run *a = left, *b = right;
    if (a->length != b->length)
        return a->length > b->length ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order; /* as a stable sort keeps them */
}

/* A buffer of `count` items of `size` bytes, or -1 with ValueError naming it. */
static Py_ssize_t items(Py_buffer *buffer, Py_ssize_t size, const char *name)
{
    if (buffer->len % size != 0) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes is not a whole number of %zd-byte items", name, buffer->len, size);
        return -1;
    }
    return buffer->len / size;
}

static PyObject *bad_index(const char *what)
{
    PyErr_Format(PyExc_ValueError, "regions_found: %s out of range", what);
    return NULL;
}

typedef struct {
    Py_ssize_t mine, text_length, shortest, most_places;
    const uint32_t *window_hashes, *window_offsets, *table_hashes, *line_starts;
    const int64_t *table_first, *table_files, *table_offsets, *text_starts, *text_ends;
    const uint8_t *codes;
    Py_ssize_t windows, distinct, places, files, codes_length, lines;
} Search;

/* The places that pass, in the order they come (window by window, each window's places in table
   order): the run through each reaches `shortest` forwards or may reach further back. */
static Place *passing_places(const Search *search, Py_ssize_t *count)
{
    Py_ssize_t capacity = 1024, used = 0;
    Place *places = PyMem_Malloc(sizeof(Place) * (size_t)capacity);
    if (places == NULL)
        return (Place *)PyErr_NoMemory();
    Py_ssize_t mine = search->mine;
    Py_ssize_t mine_start = search->text_starts[mine], mine_end = search->text_ends[mine];
    for (Py_ssize_t window = 0; window < search->windows; window++) {
        Py_ssize_t position = find_hash(search->table_hashes, search->distinct, search->window_hashes[window]);
        if (position < 0)
            continue;
        Py_ssize_t first = search->table_first[position], last = search->table_first[position + 1];
        if (first < 0 || last > search->places || first > last) {
            PyMem_Free(places);
            return (Place *)bad_index("a table's first place");
        }
        if (last - first > search->most_places)
            continue; /* an idiom */
        Py_ssize_t mine_offset = search->window_offsets[window];
        for (Py_ssize_t place = first; place < last; place++) {
            Py_ssize_t other = search->table_files[place], other_offset = search->table_offsets[place];
#if defined(__GNUC__)
            /* The text at a place is anywhere in the tree's (a cache miss each, most of this loop's
               time): asked for a few places ahead, while this one is compared. */
            if (place + PREFETCH < last) {
                Py_ssize_t ahead = search->table_files[place + PREFETCH];
                if (ahead >= 0 && ahead < search->files) {
                    Py_ssize_t at = search->text_starts[ahead] + search->table_offsets[place + PREFETCH];
                    if (at >= 0 && at < search->codes_length)
                        __builtin_prefetch(search->codes + at);
                }
            }
#endif
            if (other < 0 || other >= search->files) {
                PyMem_Free(places);
                return (Place *)bad_index("a place's file");
            }
            if (other == mine && other_offset == mine_offset)
                continue;
            Py_ssize_t left = mine_start + mine_offset, right = search->text_starts[other] + other_offset;
            Py_ssize_t forward_limit = mine_end - left < search->text_ends[other] - right ? mine_end - left
                                                                                          : search->text_ends[other] - right;
            if (other_offset < 0 || left > mine_end || right > search->text_ends[other] || search->text_starts[other] < 0
                || search->text_ends[other] > search->codes_length || mine_start < 0 || mine_end > search->codes_length) {
                PyMem_Free(places);
                return (Place *)bad_index("a place's offset");
            }
            Py_ssize_t back_limit = mine_offset < other_offset ? mine_offset : other_offset;
            int behind = back_limit > 0 && search->codes[left - 1] == search->codes[right - 1];
            Py_ssize_t forward = agreeing_forward(search->codes + left, search->codes + right, forward_limit);
            if (!behind && forward < search->shortest)
                continue;
            if (used == capacity) {
                capacity *= 2;
                Place *grown = PyMem_Realloc(places, sizeof(Place) * (size_t)capacity);
                if (grown == NULL) {
                    PyMem_Free(places);
                    return (Place *)PyErr_NoMemory();
                }
                places = grown;
            }
            places[used++] = (Place){mine_offset, other, other_offset, forward, back_limit, behind};
        }
    }
    *count = used;
    return places;
}

/* runs.regions_found's (length, start, other start, other file) of every run kept. */
static PyObject *found_runs(const Search *search)
{
    Py_ssize_t passing = 0;
    Place *places = passing_places(search, &passing);
    if (places == NULL)
        return NULL;
    uint64_t size = 16;
    while (size < 2 * (uint64_t)passing)
        size *= 2;
    Key *seen = PyMem_Calloc((size_t)size, sizeof(Key));
    Run *runs = PyMem_Malloc(sizeof(Run) * (size_t)(passing ? passing : 1));
    if (seen == NULL || runs == NULL) {
        PyMem_Free(places);
        PyMem_Free(seen);
        PyMem_Free(runs);
        return PyErr_NoMemory();
    }
    Py_ssize_t kept = 0, mine = search->mine;
    Py_ssize_t mine_start = search->text_starts[mine];
    for (Py_ssize_t index = 0; index < passing; index++) {
        const Place *place = &places[index];
        Py_ssize_t end = place->mine_offset + place->forward;
        if (!first_of_run(seen, size - 1, place->other, place->mine_offset - place->other_offset, end))
            continue; /* inside a run an earlier place of its alignment found */
        Py_ssize_t back = 0;
        if (place->behind) {
            Py_ssize_t left = mine_start + place->mine_offset, right = search->text_starts[place->other] + place->other_offset;
            back = agreeing_backward(search->codes + left, search->codes + right, place->back_limit);
        }
        if (back + place->forward < search->shortest)
            continue;
        /* Whole lines (runs._whole_lines): the start moved to the next line start, the end to the
           start of its line unless it ends that line. */
        Py_ssize_t start = place->mine_offset - back;
        Py_ssize_t line = search_sorted(search->line_starts, search->lines, start, 0);
        Py_ssize_t whole_start = line < search->lines ? (Py_ssize_t)search->line_starts[line] : search->text_length;
        line = search_sorted(search->line_starts, search->lines, end, 1) - 1;
        if (line < 0) {
            PyMem_Free(places);
            PyMem_Free(seen);
            PyMem_Free(runs);
            return bad_index("a run's line");
        }
        Py_ssize_t line_end = line + 1 < search->lines ? (Py_ssize_t)search->line_starts[line + 1] : search->text_length;
        Py_ssize_t whole_end = end >= line_end ? end : (Py_ssize_t)search->line_starts[line];
        Py_ssize_t other_start = place->other_offset + whole_start - place->mine_offset;
        Py_ssize_t length = whole_end - whole_start;
        int overlapping = place->other == mine && whole_start < other_start + length && other_start < whole_end;
        if (length >= search->shortest && !overlapping)
            runs[kept++] = (Run){length, whole_start, other_start, place->other, index};
    }
    PyMem_Free(places);
    PyMem_Free(seen);
    qsort(runs, (size_t)kept, sizeof(Run), longest_first);
    PyObject *result = PyList_New(kept);
    for (Py_ssize_t index = 0; result != NULL && index < kept; index++) {
        const Run *run = &runs[index];
        PyObject *item = Py_BuildValue("(nnnn)", run->length, run->start, run->other_start, run->other);
        if (item == NULL)
            Py_CLEAR(result);
        else
            PyList_SET_ITEM(result, index, item);
    }
    PyMem_Free(runs);
    return result;
}

/* regions_found(mine, window_hashes, window_offsets, table_hashes, table_first, table_files,
   table_offsets, codes, text_starts, text_ends, line_starts, text_length, shortest, most_places)
   -> [(length, start, other start, other file)]: the arrays as runs.regions_found has them
   (4-byte hashes, offsets and line starts; 8-byte indices; one-byte codes). */
static PyObject *regions_found(PyObject *module, PyObject *arguments)
{
    (void)module;
    Search search;
    Py_buffer buffers[10];
    memset(buffers, 0, sizeof buffers);
    if (!PyArg_ParseTuple(arguments, "ny*y*y*y*y*y*y*y*y*y*nnn:regions_found", &search.mine, &buffers[0], &buffers[1],
                          &buffers[2], &buffers[3], &buffers[4], &buffers[5], &buffers[6], &buffers[7], &buffers[8],
                          &buffers[9], &search.text_length, &search.shortest, &search.most_places))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t first_count, files_count, offsets_count, offsets_of_windows, ends_count;
    search.windows = items(&buffers[0], 4, "window_hashes");
    offsets_of_windows = items(&buffers[1], 4, "window_offsets");
    search.distinct = items(&buffers[2], 4, "table_hashes");
    first_count = items(&buffers[3], 8, "table_first");
    files_count = items(&buffers[4], 8, "table_files");
    offsets_count = items(&buffers[5], 8, "table_offsets");
    search.codes_length = buffers[6].len;
    search.files = items(&buffers[7], 8, "text_starts");
    ends_count = items(&buffers[8], 8, "text_ends");
    search.lines = items(&buffers[9], 4, "line_starts");
    if (PyErr_Occurred())
        goto done;
    if (offsets_of_windows != search.windows || first_count != search.distinct + 1 || files_count != offsets_count
        || ends_count != search.files || search.lines < 1 || search.mine < 0 || search.mine >= search.files) {
        PyErr_SetString(PyExc_ValueError, "regions_found: the arrays do not agree in length");
        goto done;
    }
    search.places = files_count;
    search.window_hashes = buffers[0].buf;
    search.window_offsets = buffers[1].buf;
    search.table_hashes = buffers[2].buf;
    search.table_first = buffers[3].buf;
    search.table_files = buffers[4].buf;
    search.table_offsets = buffers[5].buf;
    search.codes = buffers[6].buf;
    search.text_starts = buffers[7].buf;
    search.text_ends = buffers[8].buf;
    search.line_starts = buffers[9].buf;
    result = found_runs(&search);
done:
    for (int index = 0; index < 10; index++)
        if (buffers[index].obj != NULL)
            PyBuffer_Release(&buffers[index]);
    return result;
}

/* The (start, length) spans settled (runs.longest_disjoint's `settled`), open addressing. */
typedef struct {
    Py_ssize_t start, length;
    int used;
} Span;

static int span_settled(Span *table, uint64_t mask, Py_ssize_t start, Py_ssize_t length, int add)
{
    for (uint64_t slot = key_hash(start, length, 0) & mask;; slot = (slot + 1) & mask) {
        Span *span = &table[slot];
        if (!span->used) {
            if (add)
                *span = (Span){start, length, 1};
            return 0;
        }
        if (span->start == start && span->length == length)
            return 1;
    }
}

/* The first of `count` sorted values greater than `value` (`after`) or at least it. */
static Py_ssize_t bisect(const Py_ssize_t *values, Py_ssize_t count, Py_ssize_t value, int after)
{
    Py_ssize_t low = 0, high = count;
    while (low < high) {
        Py_ssize_t middle = low + (high - low) / 2;
        if (values[middle] < value || (after && values[middle] == value))
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}

/* longest_disjoint(runs, minimum) -> [(other, start, end, other start)]: runs.longest_disjoint
   over runs as regions_found gives them (length, start, other start, other), in the same order. */
static PyObject *longest_disjoint(PyObject *module, PyObject *arguments)
{
    (void)module;
    PyObject *runs;
    Py_ssize_t minimum;
    if (!PyArg_ParseTuple(arguments, "O!n:longest_disjoint", &PyList_Type, &runs, &minimum))
        return NULL;
    Py_ssize_t count = PyList_GET_SIZE(runs);
    uint64_t size = 16;
    while (size < 2 * (uint64_t)count)
        size *= 2;
    Span *settled = PyMem_Calloc((size_t)size, sizeof(Span));
    Py_ssize_t *starts = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(count + 1));
    Py_ssize_t *ends = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(count + 1));
    PyObject *chosen = PyList_New(0);
    Py_ssize_t taken = 0;
    if (settled == NULL || starts == NULL || ends == NULL) {
        PyErr_NoMemory();
        goto failed;
    }
    if (chosen == NULL)
        goto failed;
    for (Py_ssize_t index = 0; index < count; index++) {
        Py_ssize_t length, start, other_start, other;
        PyObject *run = PyList_GET_ITEM(runs, index);
        if (!PyTuple_Check(run) || !PyArg_ParseTuple(run, "nnnn", &length, &start, &other_start, &other)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "longest_disjoint: a run is a (length, start, other start, other) tuple");
            goto failed;
        }
        if (span_settled(settled, size - 1, start, length, 0))
            continue;
        Py_ssize_t end = start + length;
        Py_ssize_t first = bisect(ends, taken, start, 1), last = bisect(starts, taken, end, 0);
        if (last == first + 1 && starts[first] <= start && end <= ends[first]) {
            span_settled(settled, size - 1, start, length, 1);
            continue; /* inside one taken region: nothing free */
        }
        if (first < last) {
            /* The longest free stretch between the taken regions it meets, the first of the longest. */
            Py_ssize_t free_start = start, free_end = starts[first];
            for (Py_ssize_t between = first; between < last; between++) {
                Py_ssize_t gap_start = ends[between], gap_end = between + 1 < last ? starts[between + 1] : end;
                if (gap_end - gap_start > free_end - free_start) {
                    free_start = gap_start;
                    free_end = gap_end;
                }
            }
            if (free_end - free_start < minimum) {
                span_settled(settled, size - 1, start, length, 1);
                continue;
            }
            other_start += free_start - start;
            start = free_start;
            end = free_end;
        } else {
            span_settled(settled, size - 1, start, length, 1);
        }
        PyObject *region = Py_BuildValue("(nnnn)", other, start, end, other_start);
        if (region == NULL || PyList_Append(chosen, region) < 0) {
            Py_XDECREF(region);
            goto failed;
        }
        Py_DECREF(region);
        Py_ssize_t position = bisect(starts, taken, start, 0);
        memmove(starts + position + 1, starts + position, sizeof(Py_ssize_t) * (size_t)(taken - position));
        memmove(ends + position + 1, ends + position, sizeof(Py_ssize_t) * (size_t)(taken - position));
        starts[position] = start;
        ends[position] = end;
        taken++;
    }
    PyMem_Free(settled);
    PyMem_Free(starts);
    PyMem_Free(ends);
    return chosen;
failed:
    PyMem_Free(settled);
    PyMem_Free(starts);
    PyMem_Free(ends);
    Py_XDECREF(chosen);
    return NULL;
}

/* Sorts 4-byte hashes in place (qsort's comparator). */
static int ascending_hash(const void *left, const void *right)
{
    uint32_t a = *(const uint32_t *)left, b = *(const uint32_t *)right;
    return (a > b) - (a < b);
}

/* `count` hashes sorted, each once, in place; how many are left. */
static Py_ssize_t sorted_distinct(uint32_t *values, Py_ssize_t count)
{
    if (count == 0)
        return 0;
    qsort(values, (size_t)count, sizeof(uint32_t), ascending_hash);
    Py_ssize_t kept = 1;
    for (Py_ssize_t index = 1; index < count; index++)
        if (values[index] != values[kept - 1])
            values[kept++] = values[index];
    return kept;
}

/* An open-addressing set of sorted distinct 4-byte hashes: each slot holds an index into them plus
   one (0: free). The hashes are well mixed already, so their low bits are the slot. */
typedef struct {
    const uint32_t *hashes;
    Py_ssize_t *slots;
    uint64_t mask;
} HashSet;

static int hash_set_made(HashSet *set, const uint32_t *hashes, Py_ssize_t count)
{
    uint64_t size = 16;
    while (size < 2 * (uint64_t)count)
        size *= 2;
    set->hashes = hashes;
    set->mask = size - 1;
    set->slots = PyMem_Calloc((size_t)size, sizeof(Py_ssize_t));
    if (set->slots == NULL) {
        PyErr_NoMemory();
        return 0;
    }
    for (Py_ssize_t index = 0; index < count; index++) {
        uint64_t slot = hashes[index] & set->mask;
        while (set->slots[slot])
            slot = (slot + 1) & set->mask;
        set->slots[slot] = index + 1;
    }
    return 1;
}

/* Where `hash` is among the set's hashes, or -1. */
static Py_ssize_t hash_set_find(const HashSet *set, uint32_t hash)
{
    for (uint64_t slot = hash & set->mask; set->slots[slot]; slot = (slot + 1) & set->mask)
        if (set->hashes[set->slots[slot] - 1] == hash)
            return set->slots[slot] - 1;
    return -1;
}

/* shared_hashes(left, right) -> bytes: the 4-byte hashes both buffers hold, sorted, each once
   (runs.shared_of over each side's hashes one after another). The smaller side is sorted and made
   a HashSet, where each hash of the other side is looked for: a bisection per hash of 2.4 million
   took as long as the Python set. */
static PyObject *shared_hashes(PyObject *module, PyObject *arguments)
{
    (void)module;
    Py_buffer left, right;
    if (!PyArg_ParseTuple(arguments, "y*y*:shared_hashes", &left, &right))
        return NULL;
    PyObject *result = NULL;
    uint32_t *held = NULL;
    HashSet set = {NULL, NULL, 0};
    char *found = NULL;
    Py_ssize_t left_count = items(&left, 4, "left"), right_count = items(&right, 4, "right");
    if (left_count < 0 || right_count < 0)
        goto done;
    const Py_buffer *small = left_count <= right_count ? &left : &right;
    const Py_buffer *large = left_count <= right_count ? &right : &left;
    Py_ssize_t small_count = small->len / 4, large_count = large->len / 4;
    held = PyMem_Malloc(small->len ? (size_t)small->len : 1);
    found = PyMem_Calloc(small_count ? (size_t)small_count : 1, 1);
    if (held == NULL || found == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(held, small->buf, (size_t)small->len);
    Py_ssize_t distinct = sorted_distinct(held, small_count);
    if (!hash_set_made(&set, held, distinct))
        goto done;
    const uint32_t *probes = large->buf;
    for (Py_ssize_t index = 0; index < large_count; index++) {
        Py_ssize_t position = hash_set_find(&set, probes[index]);
        if (position >= 0)
            found[position] = 1;
    }
    Py_ssize_t shared = 0;
    for (Py_ssize_t index = 0; index < distinct; index++)
        if (found[index])
            held[shared++] = held[index];
    result = PyBytes_FromStringAndSize((const char *)held, shared * 4);
done:
    PyMem_Free(held);
    PyMem_Free(set.slots);
    PyMem_Free(found);
    PyBuffer_Release(&left);
    PyBuffer_Release(&right);
    return result;
}

/* windows_kept(hashes, offsets, counts, shared) -> (hashes, offsets, counts), each bytes: the
   windows of files one after another (`counts` of them in each file, 8-byte counts; 4-byte
   hashes beside 4-byte offsets) whose hash is in `shared` (sorted, each once), in order, and how
   many each file kept (runs.shared_windows). One call for every file: one HashSet. */
static PyObject *windows_kept(PyObject *module, PyObject *arguments)
{
    (void)module;
    Py_buffer buffers[4];
    memset(buffers, 0, sizeof buffers);
    if (!PyArg_ParseTuple(arguments, "y*y*y*y*:windows_kept", &buffers[0], &buffers[1], &buffers[2], &buffers[3]))
        return NULL;
    PyObject *result = NULL;
    HashSet set = {NULL, NULL, 0};
    uint32_t *kept = NULL;
    int64_t *kept_counts = NULL;
    Py_ssize_t count = items(&buffers[0], 4, "hashes"), offsets_count = items(&buffers[1], 4, "offsets");
    Py_ssize_t files = items(&buffers[2], 8, "counts"), distinct = items(&buffers[3], 4, "shared");
    if (PyErr_Occurred())
        goto done;
    const int64_t *counts = buffers[2].buf;
    Py_ssize_t total = 0;
    for (Py_ssize_t file = 0; file < files && total >= 0; file++)
        total = counts[file] < 0 || counts[file] > count - total ? -1 : total + counts[file];
    if (offsets_count != count || total != count) {
        PyErr_SetString(PyExc_ValueError, "windows_kept: the arrays do not agree in length");
        goto done;
    }
    kept = PyMem_Malloc(sizeof(uint32_t) * 2 * (size_t)(count ? count : 1)); /* hashes, then offsets */
    kept_counts = PyMem_Malloc(sizeof(int64_t) * (size_t)(files ? files : 1));
    if (kept == NULL || kept_counts == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (!hash_set_made(&set, buffers[3].buf, distinct))
        goto done;
    const uint32_t *hashes = buffers[0].buf, *offsets = buffers[1].buf;
    uint32_t *offsets_kept = kept + count;
    Py_ssize_t taken = 0, position = 0;
    for (Py_ssize_t file = 0; file < files; file++) {
        Py_ssize_t before = taken;
        for (int64_t index = 0; index < counts[file]; index++, position++)
            if (hash_set_find(&set, hashes[position]) >= 0) {
                kept[taken] = hashes[position];
                offsets_kept[taken++] = offsets[position];
            }
        kept_counts[file] = taken - before;
    }
    result = Py_BuildValue("(y#y#y#)", (const char *)kept, taken * 4, (const char *)offsets_kept, taken * 4,
                           (const char *)kept_counts, files * 8);
done:
    PyMem_Free(set.slots);
    PyMem_Free(kept);
    PyMem_Free(kept_counts);
    for (int index = 0; index < 4; index++)
        if (buffers[index].obj != NULL)
            PyBuffer_Release(&buffers[index]);
    return result;
}

/* A place kept for the table: its hash, and its position among all places (file, then offset). */
typedef struct {
    uint32_t hash;
    Py_ssize_t position;
} Kept;

static int by_hash_then_position(const void *left, const void *right)
{
    const Kept *a = left, *b = right;
    if (a->hash != b->hash)
        return a->hash < b->hash ? -1 : 1;
    return (a->position > b->position) - (a->position < b->position);
}

/* place_table(hashes, offsets, counts, shared) -> (hashes, first, files, offsets), each bytes:
   runs.PlaceTable.of over the files' line-start windows one file after another (`counts` of
   them in each file, 8-byte counts), keeping those whose hash is in `shared` (sorted, each once);
   4-byte hashes and offsets in, 4-byte hashes and 8-byte first places, files and offsets out. */
static PyObject *place_table(PyObject *module, PyObject *arguments)
{
    (void)module;
    Py_buffer buffers[4];
    memset(buffers, 0, sizeof buffers);
    if (!PyArg_ParseTuple(arguments, "y*y*y*y*:place_table", &buffers[0], &buffers[1], &buffers[2], &buffers[3]))
        return NULL;
    PyObject *result = NULL, *parts[4] = {NULL, NULL, NULL, NULL};
    HashSet set = {NULL, NULL, 0};
    Kept *kept = NULL;
    Py_ssize_t *file_of = NULL;
    Py_ssize_t count = items(&buffers[0], 4, "hashes"), offsets_count = items(&buffers[1], 4, "offsets");
    Py_ssize_t files = items(&buffers[2], 8, "counts"), distinct = items(&buffers[3], 4, "shared");
    if (PyErr_Occurred())
        goto done;
    const uint32_t *hashes = buffers[0].buf, *offsets = buffers[1].buf, *shared = buffers[3].buf;
    const int64_t *counts = buffers[2].buf;
    Py_ssize_t total = 0;
    for (Py_ssize_t file = 0; file < files; file++) {
        if (counts[file] < 0 || counts[file] > count - total) {
            total = -1;
            break;
        }
        total += counts[file];
    }
    if (offsets_count != count || total != count) {
        PyErr_SetString(PyExc_ValueError, "place_table: the arrays do not agree in length");
        goto done;
    }
    kept = PyMem_Malloc(sizeof(Kept) * (size_t)(count ? count : 1));
    file_of = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(count ? count : 1));
    if (kept == NULL || file_of == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (!hash_set_made(&set, shared, distinct))
        goto done;
    Py_ssize_t taken = 0, position = 0;
    for (Py_ssize_t file = 0; file < files; file++)
        for (int64_t index = 0; index < counts[file]; index++, position++) {
            file_of[position] = file;
            if (hash_set_find(&set, hashes[position]) >= 0)
                kept[taken++] = (Kept){hashes[position], position};
        }
    qsort(kept, (size_t)taken, sizeof(Kept), by_hash_then_position);
    Py_ssize_t groups = 0;
    for (Py_ssize_t index = 0; index < taken; index++)
        groups += index == 0 || kept[index].hash != kept[index - 1].hash;
    parts[0] = PyBytes_FromStringAndSize(NULL, groups * 4);
    parts[1] = PyBytes_FromStringAndSize(NULL, (groups + 1) * 8);
    parts[2] = PyBytes_FromStringAndSize(NULL, taken * 8);
    parts[3] = PyBytes_FromStringAndSize(NULL, taken * 8);
    if (parts[0] == NULL || parts[1] == NULL || parts[2] == NULL || parts[3] == NULL)
        goto done;
    uint32_t *table_hashes = (uint32_t *)PyBytes_AS_STRING(parts[0]);
    int64_t *first = (int64_t *)PyBytes_AS_STRING(parts[1]), *table_files = (int64_t *)PyBytes_AS_STRING(parts[2]);
    int64_t *table_offsets = (int64_t *)PyBytes_AS_STRING(parts[3]);
    Py_ssize_t group = 0;
    for (Py_ssize_t index = 0; index < taken; index++) {
        if (index == 0 || kept[index].hash != kept[index - 1].hash) {
            table_hashes[group] = kept[index].hash;
            first[group++] = index;
        }
        table_files[index] = file_of[kept[index].position];
        table_offsets[index] = offsets[kept[index].position];
    }
    first[groups] = taken;
    result = PyTuple_Pack(4, parts[0], parts[1], parts[2], parts[3]);
done:
    for (int index = 0; index < 4; index++) {
        Py_XDECREF(parts[index]);
        if (buffers[index].obj != NULL)
            PyBuffer_Release(&buffers[index]);
    }
    PyMem_Free(set.slots);
    PyMem_Free(kept);
    PyMem_Free(file_of);
    return result;
}

/* Growing a region over statements put in another order (reordering.across_reordered_lines): a
   few lines each side of each region, but for every region judged (26,000 at Django +304k
   appended), where building, comparing and sorting blocks of a few lines in Python was a sixth of
   the DRY worker's CPU. The same walk over the same lines: a file side is its normalized lines (a
   tuple of str, compared as Python compares str) and where each starts in its normalized text. */

typedef struct {
    PyObject *const *lines;
    Py_ssize_t count;
    const uint32_t *starts;
    int not_text; /* a line read was not a str: the call raises TypeError */
} LineSide;

#define REORDERED_BLOCK 4 /* reordering.MAX_REORDERED_LINES */
#define ASK_PYTHON (-1)   /* an index Python would read past a file's lines at (an error there) */

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

/* Whether line `index` holds text. Every line the walk compares or measures has passed here, so
   only the lines it reads are checked to be str, not every line of both files for each region. */
static int kept_line(LineSide *side, Py_ssize_t index)
{
    PyObject *line = side->lines[index];
    if (!PyUnicode_Check(line)) {
        side->not_text = 1;
        return 0;
    }
    return PyUnicode_GET_LENGTH(line) > 0;
}

/* reordering._next_kept: the next (`step` 1) or previous (-1) line holding text, or -1. */
static Py_ssize_t next_kept_line(LineSide *side, Py_ssize_t index, int step)
{
    index += step;
    while (index >= 0 && index < side->count && !kept_line(side, index))
        index += step;
    return index >= 0 && index < side->count ? index : -1;
}

/* reordering._block: up to REORDERED_BLOCK lines holding text from `index` on; how many. */
static int line_block(LineSide *side, Py_ssize_t index, int step, Py_ssize_t *block)
{
    int size = 0;
    while (index >= 0 && size < REORDERED_BLOCK) {
        block[size++] = index;
        index = next_kept_line(side, index, step);
    }
    return size;
}

/* reordering._end_lines: 1 with the first and last line holding text in text[start:end], 0 when
   the span does not start and end at line boundaries, ASK_PYTHON where Python would index past
   the lines. */
static int end_lines(LineSide *side, Py_ssize_t start, Py_ssize_t end, Py_ssize_t *first, Py_ssize_t *last)
{
    *first = search_sorted(side->starts, side->count, start, 0);
    if (*first == side->count || (Py_ssize_t)side->starts[*first] != start || start >= end)
        return 0;
    while (!kept_line(side, *first))
        if (++*first >= side->count)
            return ASK_PYTHON;
    *last = search_sorted(side->starts, side->count, end, 0) - 1;
    if (*last < 0)
        return ASK_PYTHON;
    while (!kept_line(side, *last))
        if (--*last < 0)
            return ASK_PYTHON;
    return (Py_ssize_t)side->starts[*last] + PyUnicode_GET_LENGTH(side->lines[*last]) == end;
}

/* Whether the first `size` lines of the two blocks hold the same texts in another order (not in
   the same order, and equal once sorted: the same multiset, each line matched with an equal one
   not matched yet). */
static int reordered_prefix(LineSide *mine, const Py_ssize_t *mine_block, LineSide *theirs,
                            const Py_ssize_t *their_block, int size)
{
    int in_order = 1;
    for (int index = 0; index < size && in_order; index++)
        in_order = same_line(mine->lines[mine_block[index]], theirs->lines[their_block[index]]);
    if (in_order)
        return 0;
    int matched[REORDERED_BLOCK] = {0};
    for (int index = 0; index < size; index++) {
        int found = 0;
        for (int other = 0; other < size && !found; other++)
            if (!matched[other] && same_line(mine->lines[mine_block[index]], theirs->lines[their_block[other]]))
                matched[other] = found = 1;
        if (!found)
            return 0;
    }
    return 1;
}

/* reordering._grown: the normalized characters a region grows by from the lines just outside it,
   or ASK_PYTHON. */
static Py_ssize_t grown_over(LineSide *mine, LineSide *theirs, Py_ssize_t mine_line, Py_ssize_t their_line,
                             int step)
{
    Py_ssize_t grown = 0;
    int reordered = 0;
    while (mine_line >= 0 && their_line >= 0) {
        int size = 0;
        if (reordered && same_line(mine->lines[mine_line], theirs->lines[their_line])) {
            size = 1;
        } else {
            Py_ssize_t mine_block[REORDERED_BLOCK], their_block[REORDERED_BLOCK];
            int their_size = line_block(theirs, their_line, step, their_block), near = 0;
            for (int index = 1; index < their_size && !near; index++)
                near = same_line(mine->lines[mine_line], theirs->lines[their_block[index]]);
            if (!near)
                break;
            int mine_size = line_block(mine, mine_line, step, mine_block);
            int smaller = mine_size < their_size ? mine_size : their_size;
            for (int candidate = 2; candidate <= smaller && !size; candidate++)
                if (reordered_prefix(mine, mine_block, theirs, their_block, candidate))
                    size = candidate;
            if (!size)
                break;
            reordered = 1;
        }
        for (int step_taken = 0; step_taken < size; step_taken++) {
            if (mine_line < 0)
                return ASK_PYTHON; /* never: a block's lines are all there */
            grown += PyUnicode_GET_LENGTH(mine->lines[mine_line]);
            mine_line = next_kept_line(mine, mine_line, step);
            their_line = next_kept_line(theirs, their_line, step);
        }
    }
    return grown;
}

/* A file side's arguments (lines: tuple of str, starts: 4-byte line starts, one per line), or 0
   with an exception set. */
static int line_side(PyObject *lines, Py_buffer *starts, LineSide *side)
{
    if (!PyTuple_Check(lines)) {
        PyErr_SetString(PyExc_TypeError, "reordered_growth: a side's lines are a tuple of str");
        return 0;
    }
    side->count = PyTuple_GET_SIZE(lines);
    side->lines = &PyTuple_GET_ITEM(lines, 0);
    side->starts = starts->buf;
    side->not_text = 0;
    if (starts->len != side->count * (Py_ssize_t)sizeof(uint32_t)) {
        PyErr_SetString(PyExc_ValueError, "reordered_growth: a side's line starts are not one 4-byte offset a line");
        return 0;
    }
    return 1;
}

/* reordered_growth(mine_lines, mine_starts, their_lines, their_starts, start, end, other_start)
   -> (before, after) | None: how many normalized characters reordering.across_reordered_lines
   grows the region by before and after it, or None where Python's walk would read past a file's
   lines (reordering.py then answers, as the definition). */
static PyObject *reordered_growth(PyObject *module, PyObject *arguments)
{
    (void)module;
    PyObject *mine_lines, *their_lines, *result = NULL;
    Py_buffer mine_starts = {0}, their_starts = {0};
    Py_ssize_t start, end, other_start;
    if (!PyArg_ParseTuple(arguments, "O!y*O!y*nnn:reordered_growth", &PyTuple_Type, &mine_lines, &mine_starts,
                          &PyTuple_Type, &their_lines, &their_starts, &start, &end, &other_start))
        return NULL;
    LineSide mine, theirs;
    if (!line_side(mine_lines, &mine_starts, &mine) || !line_side(their_lines, &their_starts, &theirs))
        goto done;
    Py_ssize_t mine_first = 0, mine_last = 0, their_first = 0, their_last = 0;
    int mine_ends = end_lines(&mine, start, end, &mine_first, &mine_last);
    int their_ends = end_lines(&theirs, other_start, other_start + end - start, &their_first, &their_last);
    if ((mine_ends == ASK_PYTHON || their_ends == ASK_PYTHON) && !mine.not_text && !theirs.not_text) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    Py_ssize_t before = 0, after = 0;
    if (mine_ends && their_ends) {
        before = grown_over(&mine, &theirs, next_kept_line(&mine, mine_first, -1), next_kept_line(&theirs, their_first, -1), -1);
        after = grown_over(&mine, &theirs, next_kept_line(&mine, mine_last, 1), next_kept_line(&theirs, their_last, 1), 1);
    }
    if (mine.not_text || theirs.not_text) {
        PyErr_SetString(PyExc_TypeError, "reordered_growth: a side's lines are a tuple of str");
        goto done;
    }
    result = before == ASK_PYTHON || after == ASK_PYTHON ? Py_NewRef(Py_None) : Py_BuildValue("nn", before, after);
done:
    PyBuffer_Release(&mine_starts);
    PyBuffer_Release(&their_starts);
    return result;
}

static PyMethodDef methods[] = {
    {"longest_disjoint", longest_disjoint, METH_VARARGS,
     "Each run in turn less what runs already taken cover, when still `minimum` long (runs.longest_disjoint)."},
    {"regions_found", regions_found, METH_VARARGS,
     "The maximal shared runs of a changed file's windows, longest first (runs.regions_found)."},
    {"shared_hashes", shared_hashes, METH_VARARGS, "The 4-byte hashes both buffers hold, sorted, each once (runs.shared_of)."},
    {"windows_kept", windows_kept, METH_VARARGS, "The windows whose hash is shared, in order (runs.shared_windows)."},
    {"place_table", place_table, METH_VARARGS,
     "The places of the shared hashes, sorted by hash, as bytes (runs.PlaceTable.of)."},
    {"reordered_growth", reordered_growth, METH_VARARGS,
     "How far a region grows over lines in another order before and after it (reordering.across_reordered_lines)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_runs", "The DRY search's inner loop, compiled (runs.py).", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__runs(void)
{
    /* The block size it was built with, which reordering.py compares with its own before using it. */
    PyObject *module = PyModule_Create(&module_definition);
    if (module != NULL && PyModule_AddIntConstant(module, "MAX_REORDERED_LINES", REORDERED_BLOCK) < 0)
        Py_CLEAR(module);
    return module;
}
