/* Reading text files a line at a time, with a bound on a line's length. */
#include "config.h"
#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>

ssize_t st_read_line(char **line, size_t *cap, FILE *f, size_t max)
{
    size_t n = 0;
    int c;
    while ((c = getc(f)) != EOF) {
        if (n + 2 > *cap) {
            size_t nc = *cap ? *cap * 2 : 256;
            char *p = realloc(*line, nc);
            if (!p)
                return -3;
            *line = p;
            *cap = nc;
        }
        (*line)[n++] = (char)c;
        if (c == '\n' || c == 0) /* a NUL ends it too: no text file has one */
            break;
        if (n > max) {
            (*line)[n] = 0;
            return -2;
        }
    }
    if (n == 0)
        return -1;
    (*line)[n] = 0;
    return (ssize_t)n;
}
