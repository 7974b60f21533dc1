/* Screen 1, hardware presets: the list and the spec sheet of the selected one
 * (the text of `strata show ID`). */
#include "config.h"
#include "cli/cli.h"
#include "ui/ui.h"

#include <stdlib.h>
#include <string.h>

/* Load the selected preset's description; a broken file opens the error
 * panel and leaves the details empty. */
static void load_detail(ui_app *a, size_t item)
{
    if (item == a->hw_detail_for)
        return;
    a->hw_detail_for = item;
    free(a->hw_detail);
    a->hw_detail = NULL;
    if (item == (size_t)-1)
        return;
    const st_catalog_entry *e = &a->cat.items[a->hw[item]];
    st_loaded *l = malloc(sizeof *l);
    st_error err;
    if (!l) {
        ui_error(a, "out of memory");
        return;
    }
    if (st_load(e->path, l, &err)) {
        ui_error(a, "%s", err.msg);
        free(l);
        return;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f) {
        cli_print_loaded(l, f);
        fclose(f);
        a->hw_detail = buf;
    }
    st_loaded_free(l);
    free(l);
}

void ui_presets_draw(ui_app *a, ui_rect r)
{
    int lw = r.w * 2 / 5 < 56 ? r.w * 2 / 5 : 56;
    ui_rect left = {r.y, r.x, r.h, lw}, right = {r.y, r.x + lw, r.h, r.w - lw};
    ui_list_draw(&a->hw_list, left, "Hardware presets", a->pane == 0);
    size_t cur = ui_list_current(&a->hw_list);
    load_detail(a, cur);
    ui_box(right, cur == (size_t)-1 ? "Details" : a->cat.items[a->hw[cur]].path, a->pane == 1);
    if (!a->hw_detail)
        return;
    const char *s = a->hw_detail;
    for (int row = 1; row < right.h - 1 && *s; row++) {
        size_t n = strcspn(s, "\n");
        ui_text(right.y + row, right.x + 2, right.w - 3, UI_NORMAL, "%.*s", (int)n, s);
        s += n + (s[n] == '\n');
    }
}

int ui_presets_key(ui_app *a, int key)
{
    if (ui_list_key(&a->hw_list, key, LINES / 2))
        return 1; /* the details follow the cursor when drawn */
    if (key == '\n' || key == KEY_ENTER) {
        a->hw_detail_for = (size_t)-2; /* read the file again */
        load_detail(a, ui_list_current(&a->hw_list));
        a->pane = 1;
        return 1;
    }
    return 0;
}
