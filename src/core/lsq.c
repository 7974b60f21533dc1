/* Weighted ridge least squares through LAPACK's Householder QR. */
#include "config.h"
#include "core/core.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* min |A x - b| for a full-column-rank m x n A (column-major, m >= n): the
 * steps of LAPACK's dgels (QR of A, Q^T b, R x = Q^T b) called directly, so
 * the arithmetic is dgels's bit for bit, without its two scans of A that
 * cost more than the factorisation on the calibration's tall, narrow
 * systems: the NaN check (the caller has checked every entry is finite)
 * and the max-norm dgels rescales A by only when it is below about 1e-292
 * or above 1e292, which finite spec-sheet features never are. The solution
 * is in b[0..n); 0, or j > 0 when R's j-th pivot is exactly zero (dgels's
 * rank test), or < 0 on a bad argument or no memory (-1000). */
static lapack_int qr_solve(lapack_int m, lapack_int n, double *A, double *b)
{
    double q1 = 0, q2 = 0;
    /* the workspace dgels gives each step: its optimum, so that the blocked
     * factorisation runs the block size dgels's would */
    lapack_int info = LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, A, m, NULL, &q1, -1);
    if (info == 0)
        info = LAPACKE_dormqr_work(LAPACK_COL_MAJOR, 'L', 'T', m, 1, n, A, m, NULL, b, m, &q2, -1);
    if (info != 0)
        return info < 0 ? info : -1;
    lapack_int lwork = (lapack_int)fmax(fmax(q1, q2), 1);
    double *tau = malloc((size_t)n * sizeof *tau), *work = malloc((size_t)lwork * sizeof *work);
    if (!tau || !work)
        info = -1000;
    if (info == 0)
        info = LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, A, m, tau, work, lwork);
    if (info == 0)
        info = LAPACKE_dormqr_work(LAPACK_COL_MAJOR, 'L', 'T', m, 1, n, A, m, tau, b, m, work, lwork);
    if (info == 0)
        info = LAPACKE_dtrtrs_work(LAPACK_COL_MAJOR, 'U', 'N', 'N', n, 1, A, m, b, m);
    free(tau);
    free(work);
    return info;
}

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
    info = qr_solve((lapack_int)rows, (lapack_int)p, A, b);
    if (info == 0) {
        /* the solve flags only an exactly zero pivot; a pivot tiny next to the
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
        if (info == -1000)
            return st_error_set(err, ST_ENOMEM, "least squares: out of memory (%zu x %zu)", rows, p);
        return st_error_set(err, ST_EINVAL,
                            info > 0 ? "least squares: the features are linearly dependent "
                                       "(rank deficient); add a ridge penalty or drop one"
                                     : "least squares: bad argument to LAPACK's QR solver");
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
