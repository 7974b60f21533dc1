/*
 * Readers for Timeloop v0.4 files (problem, mapping, architecture, Accelergy
 * ERT). Same error contract as io.h: FILE:LINE:COL, what was expected, and
 * nothing half-filled on failure.
 */
#ifndef STRATA_IO_TIMELOOP_H
#define STRATA_IO_TIMELOOP_H

#include "accel/accel.h"
#include "io/io.h"

int st_load_timeloop_problem(const char *path, st_aprob *p, st_error *err);
int st_load_timeloop_mapping(const char *path, const st_accel *a, const st_aprob *p,
                             st_amap *m, st_error *err);
/* A Timeloop architecture (v0.4 tree or the flattened form) with its ERT:
 * ert_path NULL looks for *.ERT.yaml beside the architecture file. */
int st_load_timeloop_arch(const char *arch_path, const char *ert_path, st_accel *a,
                          st_error *err);
/* 1 when the file looks like a Timeloop architecture (has `architecture:`),
 * 0 when it is YAML without it; negative (err filled: FILE:LINE:COL) when
 * it cannot be read or parsed. */
int st_is_timeloop_arch(const char *path, st_error *err);
/* An accelerator by preset name or path: a strata preset, or a Timeloop
 * architecture file with its ERT (ert_path, else found beside it). A
 * strata preset with ert_path set is an error (its energies are inside). */
int st_load_arch(const char *name, const char *ert_path, st_accel *a, st_error *err);

#endif
