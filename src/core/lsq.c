/* Weighted ridge least squares through LAPACKE's QR solver (dgels). */
#include "config.h"
#include "core/core.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int st_ridge(const double *X, const double *y, const double *w, size_t n, size_t p,
             double lambda, double *beta, double *resid_sd, st_error *err)
{
    size_t rows = n + (lambda > 0 ? p : 0);
    double *A, *b;
    lapack_int info;
    if (p == 0 || n < (lambda > 0 ? 1 : p))
        return st_error_set(err, ST_EINVAL,
                            "least squares: %zu rows cannot determine %zu coefficients", n, p);
    if (lambda < 0 || !isfinite(lambda))
        return st_error_set(err, ST_EINVAL, "least squares: ridge penalty must be >= 0");
    A = calloc(rows * p, sizeof *A);
    b = calloc(rows, sizeof *b);
    if (!A || !b) {
        free(A);
        free(b);
        return st_error_set(err, ST_ENOMEM, "least squares: out of memory (%zu x %zu)", rows, p);
    }
    /* column-major, so LAPACKE need not transpose a copy */
    for (size_t i = 0; i < n; i++) {
        if (w && !(w[i] >= 0 && isfinite(w[i]))) { /* NaN fails the comparison too */
            free(A);
            free(b);
            return st_error_set(err, ST_EINVAL,
                                "least squares: the weight of row %zu is %g; weights must be finite "
                                "and >= 0", i, w[i]);
        }
        double sw = w ? sqrt(w[i]) : 1;
        int finite = isfinite(y[i]);
        for (size_t j = 0; j < p; j++) {
            A[j * rows + i] = sw * X[i * p + j];
            finite = finite && isfinite(X[i * p + j]);
        }
        b[i] = sw * y[i];
        if (!finite || !isfinite(b[i])) {
            free(A);
            free(b);
            return st_error_set(err, ST_EINVAL, "least squares: row %zu is not finite", i);
        }
    }
    for (size_t j = 0; j < p && lambda > 0; j++)
        A[j * rows + n + j] = sqrt(lambda);
    info = LAPACKE_dgels(LAPACK_COL_MAJOR, 'N', (lapack_int)rows, (lapack_int)p, 1, A,
                         (lapack_int)rows, b, (lapack_int)rows);
    if (info == 0) {
        /* dgels flags only an exactly zero pivot; a pivot tiny next to the
         * largest one (R's diagonal, now in A) means dependent features too */
        double rmax = 0;
        for (size_t j = 0; j < p; j++)
            rmax = fmax(rmax, fabs(A[j * rows + j]));
        for (size_t j = 0; j < p; j++)
            if (fabs(A[j * rows + j]) <= 1e-10 * rmax)
                info = (lapack_int)j + 1;
    }
    if (info != 0) {
        free(A);
        free(b);
        return st_error_set(err, ST_EINVAL,
                            info > 0 ? "least squares: the features are linearly dependent "
                                       "(rank deficient); add a ridge penalty or drop one"
                                     : "least squares: bad argument to LAPACKE_dgels");
    }
    memcpy(beta, b, p * sizeof *beta);
    if (resid_sd) {
        double ss = 0, sw = 0;
        for (size_t i = 0; i < n; i++) {
            double r = y[i], wi = w ? w[i] : 1;
            for (size_t j = 0; j < p; j++)
                r -= X[i * p + j] * beta[j];
            ss += wi * r * r;
            sw += wi;
        }
        *resid_sd = sw > 0 ? sqrt(ss / sw) : 0;
    }
    free(A);
    free(b);
    return 0;
}
