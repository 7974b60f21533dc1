/* Did-you-mean for unknown keys, names and options. */
#include "config.h"
#include "core/core.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int st_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 256 || lb > 256)
        return (int)(la > lb ? la : lb);
    int row[257];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int best = diag + cost;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *st_suggest(const char *word, const char *const *candidates, size_t n)
{
    const char *best = NULL;
    int best_d = 0;
    int limit = (int)strlen(word) / 3;
    if (limit < 2)
        limit = 2;
    for (size_t i = 0; i < n; i++) {
        int d = st_edit_distance(word, candidates[i]);
        if (d <= limit && (!best || d < best_d)) {
            best = candidates[i];
            best_d = d;
        }
    }
    return best;
}
