/* Completion calls: Wait, Test and their any/all/some forms,
 * Request_get_status (and its MPI 4.1 array forms), Request_free, Cancel. */
#include "pt2pt/match.h"

#include "binding/binding.h"
#include "core/errors.h"
#include "progress/progress.h"

/* A handle the completion calls skip: MPI_REQUEST_NULL, or an inactive
 * persistent request. */
static bool req_inactive(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL)
        return true;
    halo_request_t *r = halo_req_ptr(h);
    return r->persistent && !r->active;
}

static int check_req(MPI_Request h, const char *what)
{
    if (h == MPI_REQUEST_NULL || h == (MPI_Request)halo_req_sent)
        return MPI_SUCCESS;
    if (!halo_req_get(h))
        return halo_err(MPI_ERR_REQUEST, "(%s=%p): not a valid request", what, (void *)h);
    return MPI_SUCCESS;
}

/* Every handle valid, and no two of them from different sessions (objects
 * of two sessions may not meet in one call, MPI 4.0's Sessions Model): the
 * second session's request raises the error on its communicator. */
static int check_reqs(int count, const MPI_Request reqs[])
{
    if (count > 0 && !reqs)
        return halo_err(MPI_ERR_ARG, "(array_of_requests=NULL): array required for count=%d", count);
    const void *session = NULL;
    for (int i = 0; i < count; i++) {
        MPI_Request h = reqs[i];
        if (h == MPI_REQUEST_NULL || h == (MPI_Request)halo_req_sent)
            continue;
        halo_request_t *r = halo_req_get(h);
        if (!r)
            return halo_err(MPI_ERR_REQUEST, "(array_of_requests[%d]=%p): not a valid request", i, (void *)h);
        const void *s = r->comm ? r->comm->session : NULL;
        if (s && session && s != session) {
            int rc = halo_err(MPI_ERR_REQUEST, "(array_of_requests[%d]): its communicator comes from another "
                              "session than the earlier requests'", i);
            halo_err_redirect_comm(halo_comm_handle(r->comm));
            return rc;
        }
        if (s)
            session = s;
    }
    return MPI_SUCCESS;
}

int halo_api_wait(MPI_Request *request, MPI_Status *status)
{
    int rc = check_req(*request, "request");
    if (rc)
        return rc;
    if (req_inactive(*request)) {
        halo_status_empty_out(status);
        return MPI_SUCCESS;
    }
    halo_req_wait_raw(halo_req_ptr(*request));
    return halo_req_finish(request, status);
}

int halo_api_test(MPI_Request *request, int *flag, MPI_Status *status)
{
    int rc = check_req(*request, "request");
    if (rc)
        return rc;
    if (req_inactive(*request)) {
        *flag = 1;
        halo_status_empty_out(status);
        return MPI_SUCCESS;
    }
    halo_request_t *r = halo_req_ptr(*request);
    if (!halo_req_done(r))
        halo_progress_poll();
    *flag = halo_req_done(r);
    if (!*flag)
        return MPI_SUCCESS;
    return halo_req_finish(request, status);
}

typedef struct multi {
    int count;
    MPI_Request *reqs;
    int need;     /* completions wanted: 1 (any/some) or all active */
    int next;     /* need == 0: requests before it are done or inactive */
} multi_t;

static int count_done(const multi_t *m, int *nactive_p)
{
    int done = 0, active = 0;
    for (int i = 0; i < m->count; i++) {
        if (req_inactive(m->reqs[i]))
            continue;
        active++;
        if (halo_req_done(halo_req_ptr(m->reqs[i])))
            done++;
    }
    if (nactive_p)
        *nactive_p = active;
    return done;
}

/* Called on every poll of a wait. A request stays done until the caller
 * finishes it, so "all" resumes where the last call stopped (a window of
 * 64 receives used to be walked whole after each arrival), and "any"
 * stops at the first completion. */
static bool multi_ready(void *arg)
{
    multi_t *m = arg;
    if (m->need == 0) {
        while (m->next < m->count &&
               (req_inactive(m->reqs[m->next]) || halo_req_done(halo_req_ptr(m->reqs[m->next]))))
            m->next++;
        return m->next == m->count;
    }
    bool active = false;
    for (int i = 0; i < m->count; i++) {
        if (req_inactive(m->reqs[i]))
            continue;
        if (halo_req_done(halo_req_ptr(m->reqs[i])))
            return true;
        active = true;
    }
    return !active;
}

int halo_api_waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    int rc = check_reqs(count, reqs);
    if (rc)
        return rc;
    multi_t m = {count, reqs, 0, 0};
    halo_progress_wait(multi_ready, &m);
    int errors = 0;
    MPI_Status st;
    int *codes = statuses != MPI_STATUSES_IGNORE ? halo_malloc((size_t)(count ? count : 1) * sizeof(int)) : NULL;
    for (int i = 0; i < count; i++) {
        MPI_Status *s = statuses != MPI_STATUSES_IGNORE ? &statuses[i] : &st;
        int r = MPI_SUCCESS;
        if (req_inactive(reqs[i]))
            halo_status_empty_out(s);
        else
            r = halo_req_finish(&reqs[i], s);
        if (codes)
            codes[i] = r;
        if (r != MPI_SUCCESS)
            errors++;
    }
    /* The error fields are set only when the call reports MPI_ERR_IN_STATUS. */
    if (errors && codes)
        for (int i = 0; i < count; i++)
            statuses[i].MPI_ERROR = codes[i];
    free(codes);
    return errors ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int halo_api_testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    int rc = check_reqs(count, reqs);
    if (rc)
        return rc;
    multi_t m = {count, reqs, 0, 0};
    if (!multi_ready(&m)) {
        halo_progress_poll();
        if (!multi_ready(&m)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    return halo_api_waitall(count, reqs, statuses);
}

static int first_done(int count, MPI_Request reqs[])
{
    for (int i = 0; i < count; i++)
        if (!req_inactive(reqs[i]) && halo_req_done(halo_req_ptr(reqs[i])))
            return i;
    return -1;
}

int halo_api_waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    int rc = check_reqs(count, reqs);
    if (rc)
        return rc;
    multi_t m = {count, reqs, 1, 0};
    halo_progress_wait(multi_ready, &m);
    int i = first_done(count, reqs);
    if (i < 0) {
        *index = MPI_UNDEFINED;
        halo_status_empty_out(status);
        return MPI_SUCCESS;
    }
    *index = i;
    return halo_req_finish(&reqs[i], status);
}

int halo_api_testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    int rc = check_reqs(count, reqs);
    if (rc)
        return rc;
    int active;
    count_done(&(multi_t){count, reqs, 1, 0}, &active);
    if (active == 0) {
        *flag = 1;
        *index = MPI_UNDEFINED;
        halo_status_empty_out(status);
        return MPI_SUCCESS;
    }
    int i = first_done(count, reqs);
    if (i < 0) {
        halo_progress_poll();
        i = first_done(count, reqs);
    }
    if (i < 0) {
        *flag = 0;
        *index = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    *flag = 1;
    *index = i;
    return halo_req_finish(&reqs[i], status);
}

static int collect_some(int count, MPI_Request reqs[], int *outcount, int indices[],
                        MPI_Status statuses[])
{
    int n = 0, errors = 0;
    int *codes = halo_malloc((size_t)(count ? count : 1) * sizeof(int));
    for (int i = 0; i < count; i++) {
        if (req_inactive(reqs[i]) || !halo_req_done(halo_req_ptr(reqs[i])))
            continue;
        MPI_Status st;
        MPI_Status *s = statuses != MPI_STATUSES_IGNORE ? &statuses[n] : &st;
        codes[n] = halo_req_finish(&reqs[i], s);
        if (codes[n] != MPI_SUCCESS)
            errors++;
        indices[n++] = i;
    }
    *outcount = n;
    if (errors && statuses != MPI_STATUSES_IGNORE)
        for (int k = 0; k < n; k++)
            statuses[k].MPI_ERROR = codes[k];
    free(codes);
    return errors ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int halo_api_waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                      MPI_Status statuses[])
{
    int rc = check_reqs(incount, reqs);
    if (rc)
        return rc;
    int active;
    count_done(&(multi_t){incount, reqs, 1, 0}, &active);
    if (active == 0) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    multi_t m = {incount, reqs, 1, 0};
    halo_progress_wait(multi_ready, &m);
    return collect_some(incount, reqs, outcount, indices, statuses);
}

int halo_api_testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                      MPI_Status statuses[])
{
    int rc = check_reqs(incount, reqs);
    if (rc)
        return rc;
    int active;
    int done = count_done(&(multi_t){incount, reqs, 1, 0}, &active);
    if (active == 0) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    if (!done)
        halo_progress_poll();
    return collect_some(incount, reqs, outcount, indices, statuses);
}

/* Status of a complete request without freeing it. */
static void peek_status(halo_request_t *r, MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    if (r->kind == HALO_REQ_GREQ) {
        MPI_Status st;
        halo_status_empty(&st);
        r->query_fn(r->extra_state, &st);
        halo_status_out(status, &st);
        return;
    }
    halo_status_out(status, &r->status);
}

int halo_api_request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    int rc = check_req(request, "request");
    if (rc)
        return rc;
    if (req_inactive(request)) {
        *flag = 1;
        halo_status_empty_out(status);
        return MPI_SUCCESS;
    }
    halo_request_t *r = halo_req_ptr(request);
    if (!halo_req_done(r))
        halo_progress_poll();
    *flag = halo_req_done(r);
    if (*flag)
        peek_status(r, status);
    return MPI_SUCCESS;
}

int halo_api_request_get_status_any(int count, const MPI_Request reqs[], int *index, int *flag,
                                    MPI_Status *status)
{
    int rc = check_reqs(count, reqs);
    if (rc)
        return rc;
    int active;
    count_done(&(multi_t){count, (MPI_Request *)reqs, 1, 0}, &active);
    if (active == 0) {
        *flag = 1;
        *index = MPI_UNDEFINED;
        halo_status_empty_out(status);
        return MPI_SUCCESS;
    }
    int i = first_done(count, (MPI_Request *)reqs);
    if (i < 0) {
        halo_progress_poll();
        i = first_done(count, (MPI_Request *)reqs);
    }
    *flag = i >= 0;
    *index = i >= 0 ? i : MPI_UNDEFINED;
    if (i >= 0)
        peek_status(halo_req_ptr(reqs[i]), status);
    return MPI_SUCCESS;
}

int halo_api_request_get_status_all(int count, const MPI_Request reqs[], int *flag,
                                    MPI_Status statuses[])
{
    int rc = check_reqs(count, reqs);
    if (rc)
        return rc;
    multi_t m = {count, (MPI_Request *)reqs, 0, 0};
    if (!multi_ready(&m))
        halo_progress_poll();
    *flag = multi_ready(&m);
    if (*flag && statuses != MPI_STATUSES_IGNORE) {
        for (int i = 0; i < count; i++) {
            if (req_inactive(reqs[i]))
                halo_status_empty_out(&statuses[i]);
            else
                peek_status(halo_req_ptr(reqs[i]), &statuses[i]);
        }
    }
    return MPI_SUCCESS;
}

int halo_api_request_get_status_some(int incount, const MPI_Request reqs[], int *outcount,
                                     int indices[], MPI_Status statuses[])
{
    int rc = check_reqs(incount, reqs);
    if (rc)
        return rc;
    int active;
    int done = count_done(&(multi_t){incount, (MPI_Request *)reqs, 1, 0}, &active);
    if (active == 0) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    if (!done)
        halo_progress_poll();
    int n = 0;
    for (int i = 0; i < incount; i++) {
        if (req_inactive(reqs[i]) || !halo_req_done(halo_req_ptr(reqs[i])))
            continue;
        if (statuses != MPI_STATUSES_IGNORE)
            peek_status(halo_req_ptr(reqs[i]), &statuses[n]);
        indices[n++] = i;
    }
    *outcount = n;
    return MPI_SUCCESS;
}

int halo_api_request_free(MPI_Request *request)
{
    halo_request_t *r = halo_req_get(*request);
    if (!r)
        return halo_err(MPI_ERR_REQUEST, "(request=%p): not a valid request", (void *)*request);
    if (r == halo_req_sent) {
        *request = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    }
    if (r->kind == HALO_REQ_GREQ) {
        /* free_fn runs once both MPI_Request_free and MPI_Grequest_complete
         * have happened, whichever comes last. */
        int rc = MPI_SUCCESS;
        if (halo_req_done(r)) {
            rc = r->free_fn(r->extra_state);
            halo_req_free(r);
        } else {
            r->user_freed = 1;
            r->hdr.flags |= HALO_OBJ_USER_FREED;
        }
        *request = MPI_REQUEST_NULL;
        return rc;
    }
    if (r->kind == HALO_REQ_PART && r->active && !halo_req_done(r))
        return halo_err(MPI_ERR_REQUEST, ": a partitioned request that is active and not complete "
                        "cannot be freed (erroneous in MPI 4.1); complete it first");
    if (r->persistent && r->active && !halo_req_done(r)) {
        r->persistent = 0;
        r->user_freed = 1;
    } else if (halo_req_done(r) || (r->persistent && !r->active)) {
        halo_req_free(r);
    } else {
        r->user_freed = 1;
    }
    r->hdr.flags |= r->user_freed ? HALO_OBJ_USER_FREED : 0;
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int halo_api_cancel(MPI_Request *request)
{
    halo_request_t *r = halo_req_get(*request);
    if (!r)
        return halo_err(MPI_ERR_REQUEST, "(request=%p): not a valid request", (void *)*request);
    if (r->persistent && !r->active)
        return halo_err(MPI_ERR_REQUEST, ": cannot cancel an inactive persistent request");
    if (r->kind == HALO_REQ_PART && !halo_req_done(r))
        return halo_err(MPI_ERR_REQUEST, ": a partitioned request that is active and not complete "
                        "cannot be cancelled (erroneous in MPI 4.1)");
    /* A generalized request's cancel callback runs even after completion;
     * it is told whether the request completed. */
    if (r->kind == HALO_REQ_GREQ)
        return r->cancel_fn(r->extra_state, halo_req_done(r));
    if (halo_req_done(r))
        return MPI_SUCCESS;
    if (r->kind == HALO_REQ_RECV) {
        halo_match_t *m = halo_match_find(r->ctx);
        if (m && halo_match_unpost(m, r)) {
            halo_status_set_cancelled(&r->status, 1);
            r->status.MPI_SOURCE = MPI_ANY_SOURCE;
            r->status.MPI_TAG = MPI_ANY_TAG;
            halo_status_set_bytes(&r->status, 0);
            r->cancelled = 1;
            halo_req_complete(r);
        }
        return MPI_SUCCESS;
    }
    if (r->kind == HALO_REQ_SEND)
        halo_send_cancel(r);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- generalized */

int halo_api_grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                            MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                            MPI_Request *request)
{
    halo_request_t *r = halo_req_alloc(HALO_REQ_GREQ, NULL);
    r->query_fn = query_fn;
    r->free_fn = free_fn;
    r->cancel_fn = cancel_fn;
    r->extra_state = extra_state;
    halo_status_empty(&r->status);
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

int halo_api_grequest_complete(MPI_Request request)
{
    halo_request_t *r = halo_req_get(request);
    if (!r && request != MPI_REQUEST_NULL) {
        /* The user may already have freed it with MPI_Request_free. */
        r = halo_req_ptr(request);
        if (!(r->hdr.flags & HALO_OBJ_LIVE) || r->kind != HALO_REQ_GREQ)
            r = NULL;
    }
    if (!r || r->kind != HALO_REQ_GREQ)
        return halo_err(MPI_ERR_REQUEST, "(request=%p): not a generalized request", (void *)request);
    if (r->user_freed) {
        /* Freed earlier by the user: completing it ends its life. */
        int rc = r->free_fn(r->extra_state);
        halo_req_free(r);
        return rc;
    }
    halo_req_complete(r);
    halo_progress_signal();
    return MPI_SUCCESS;
}
