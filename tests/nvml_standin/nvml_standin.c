/* An NVML stand-in for machines without an NVIDIA GPU: a shared library exporting the NVML
 * functions envkit's checks call (envkit/checks/core/nvml.py), answering them from a JSON
 * scenario file named by NVML_STANDIN_SCENARIO. The tests build it with gcc as
 * libnvidia-ml.so.1 and put its folder on LD_LIBRARY_PATH, so envkit loads it through the very
 * ctypes path that loads the real library the NVIDIA container toolkit mounts.
 *
 * The scenario format is documented in docs/gpu-health.md. In short: every GPU is an object of
 * fields; a number is the answer, an array of numbers is one answer per read (the last one
 * repeated), a string is an NVML error ("not_supported", "gpu_is_lost", ...), and a missing
 * field answers NVML_ERROR_NOT_SUPPORTED.
 *
 * This is test code: the stand-in for hardware that cannot exist here, not a model of a GPU. */

#define _GNU_SOURCE
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

typedef unsigned long long ull;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_UNKNOWN = 999,
};

static const struct { const char *name; int code; } ERRORS[] = {
    {"uninitialized", 1}, {"invalid_argument", 2}, {"not_supported", 3}, {"no_permission", 4},
    {"already_initialized", 5}, {"not_found", 6}, {"insufficient_size", 7},
    {"insufficient_power", 8}, {"driver_not_loaded", 9}, {"timeout", 10}, {"irq_issue", 11},
    {"library_not_found", 12}, {"function_not_found", 13}, {"corrupted_inforom", 14},
    {"gpu_is_lost", 15}, {"reset_required", 16}, {"operating_system", 17},
    {"lib_rm_version_mismatch", 18}, {"in_use", 19}, {"memory", 20}, {"no_data", 21},
    {"unknown", 999},
};

/* ------------------------------------------------------------------ a small JSON reader */

typedef enum { J_NULL, J_NUMBER, J_STRING, J_ARRAY, J_OBJECT } kind_t;

typedef struct node {
    kind_t kind;
    double number;
    char *string;
    struct node **items; /* array items or object values */
    char **keys;         /* object keys */
    int count;
    int reads; /* arrays of numbers: how many times read so far */
} node;

typedef struct { const char *at; int ok; } cursor;

static node *parse_value(cursor *c);

static void skip_space(cursor *c) {
    while (*c->at && isspace((unsigned char)*c->at)) c->at++;
}

static node *new_node(kind_t kind) {
    node *n = calloc(1, sizeof(node));
    n->kind = kind;
    return n;
}

static char *parse_string_raw(cursor *c) {
    if (*c->at != '"') { c->ok = 0; return NULL; }
    c->at++;
    size_t cap = 32, len = 0;
    char *out = malloc(cap);
    while (*c->at && *c->at != '"') {
        char ch = *c->at++;
        if (ch == '\\') {
            char esc = *c->at++;
            if (esc == 'n') ch = '\n';
            else if (esc == 't') ch = '\t';
            else if (esc == 'u') { /* keep ASCII only: enough for scenario files */
                unsigned code = 0;
                for (int i = 0; i < 4 && *c->at; i++) code = code * 16 + (unsigned)(isdigit((unsigned char)*c->at) ? *c->at - '0' : (tolower((unsigned char)*c->at) - 'a' + 10)), c->at++;
                ch = code < 128 ? (char)code : '?';
            } else ch = esc;
        }
        if (len + 2 > cap) { cap *= 2; out = realloc(out, cap); }
        out[len++] = ch;
    }
    if (*c->at != '"') { c->ok = 0; free(out); return NULL; }
    c->at++;
    out[len] = 0;
    return out;
}

static void push(node *n, node *item, char *key) {
    n->items = realloc(n->items, sizeof(node *) * (n->count + 1));
    n->items[n->count] = item;
    if (n->kind == J_OBJECT) {
        n->keys = realloc(n->keys, sizeof(char *) * (n->count + 1));
        n->keys[n->count] = key;
    }
    n->count++;
}

static node *parse_container(cursor *c, char close, kind_t kind) {
    node *n = new_node(kind);
    c->at++;
    skip_space(c);
    if (*c->at == close) { c->at++; return n; }
    while (c->ok) {
        skip_space(c);
        char *key = NULL;
        if (kind == J_OBJECT) {
            key = parse_string_raw(c);
            skip_space(c);
            if (!c->ok || *c->at != ':') { c->ok = 0; return n; }
            c->at++;
        }
        push(n, parse_value(c), key);
        skip_space(c);
        if (*c->at == ',') { c->at++; continue; }
        if (*c->at == close) { c->at++; return n; }
        c->ok = 0;
    }
    return n;
}

static node *parse_value(cursor *c) {
    skip_space(c);
    char ch = *c->at;
    if (ch == '{') return parse_container(c, '}', J_OBJECT);
    if (ch == '[') return parse_container(c, ']', J_ARRAY);
    if (ch == '"') {
        node *n = new_node(J_STRING);
        n->string = parse_string_raw(c);
        return n;
    }
    if (!strncmp(c->at, "true", 4)) { c->at += 4; node *n = new_node(J_NUMBER); n->number = 1; return n; }
    if (!strncmp(c->at, "false", 5)) { c->at += 5; return new_node(J_NUMBER); }
    if (!strncmp(c->at, "null", 4)) { c->at += 4; return new_node(J_NULL); }
    char *end = NULL;
    double value = strtod(c->at, &end);
    if (end == c->at) { c->ok = 0; return new_node(J_NULL); }
    c->at = end;
    node *n = new_node(J_NUMBER);
    n->number = value;
    return n;
}

static node *child(node *n, const char *key) {
    if (!n) return NULL;
    if (n->kind == J_OBJECT) {
        for (int i = 0; i < n->count; i++) if (!strcmp(n->keys[i], key)) return n->items[i];
        return NULL;
    }
    if (n->kind == J_ARRAY && isdigit((unsigned char)key[0])) {
        int index = atoi(key);
        return index < n->count ? n->items[index] : NULL;
    }
    return NULL;
}

/* ------------------------------------------------------------------ the scenario */

static node *scenario = NULL;
static int initialized = 0;
static struct timespec started; /* nvmlInit: "lost_after_ms" counts from here */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct { int index; } device;
static device devices[64];

static int error_code(const char *name) {
    for (size_t i = 0; i < sizeof(ERRORS) / sizeof(ERRORS[0]); i++)
        if (!strcasecmp(ERRORS[i].name, name)) return ERRORS[i].code;
    return NVML_ERROR_UNKNOWN;
}

static node *gpus(void) { return child(scenario, "gpus"); }

static node *gpu_of(void *handle) {
    device *d = handle;
    node *all = gpus();
    if (!initialized || !d || !all || d->index >= all->count) return NULL;
    return all->items[d->index];
}

/* The value at a dotted path below `base`: an error string met on the way is the answer, a
 * missing step is NOT_SUPPORTED, an array of numbers gives one element per read. */
static int read_path(node *base, const char *path, double *out) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    char buffer[256];
    snprintf(buffer, sizeof buffer, "%s", path);
    node *n = base;
    for (char *part = strtok(buffer, "."); part; part = strtok(NULL, ".")) {
        if (n && n->kind == J_STRING) return error_code(n->string);
        if (n && n->kind == J_ARRAY && isdigit((unsigned char)part[0]) && atoi(part) >= n->count)
            return NVML_ERROR_INVALID_ARGUMENT;
        n = child(n, part);
        if (!n || n->kind == J_NULL) return NVML_ERROR_NOT_SUPPORTED;
    }
    if (n->kind == J_STRING) return error_code(n->string);
    if (n->kind == J_ARRAY) {
        if (n->count == 0) return NVML_ERROR_NOT_SUPPORTED;
        pthread_mutex_lock(&lock);
        int at = n->reads < n->count ? n->reads : n->count - 1;
        n->reads++;
        pthread_mutex_unlock(&lock);
        n = n->items[at];
        if (n->kind == J_STRING) return error_code(n->string);
    }
    if (n->kind != J_NUMBER) return NVML_ERROR_NOT_SUPPORTED;
    *out = n->number;
    return NVML_SUCCESS;
}

/* A GPU with "lost_after_ms": N answers every call with GPU_IS_LOST once N ms have passed
 * since nvmlInit: a GPU that falls off the bus while the suite runs. */
static int lost(void *dev) {
    double after = 0;
    node *gpu = gpu_of(dev);
    if (!gpu || read_path(gpu, "lost_after_ms", &after) != NVML_SUCCESS) return 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double ms = (now.tv_sec - started.tv_sec) * 1e3 + (now.tv_nsec - started.tv_nsec) / 1e6;
    return ms >= after;
}

static int read_uint(void *dev, const char *path, unsigned int *out) {
    double value = 0;
    if (!out) return NVML_ERROR_INVALID_ARGUMENT;
    if (lost(dev)) return 15;
    int rc = read_path(gpu_of(dev), path, &value);
    if (rc == NVML_SUCCESS) *out = (unsigned int)value;
    return rc;
}

static int read_ull(void *dev, const char *path, ull *out) {
    double value = 0;
    if (!out) return NVML_ERROR_INVALID_ARGUMENT;
    if (lost(dev)) return 15;
    int rc = read_path(gpu_of(dev), path, &value);
    if (rc == NVML_SUCCESS) *out = (ull)value;
    return rc;
}

static int read_text(void *dev, const char *key, char *out, unsigned int length) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    if (lost(dev)) return 15;
    node *n = child(gpu_of(dev), key);
    if (!n) return NVML_ERROR_NOT_SUPPORTED;
    if (n->kind != J_STRING) return NVML_ERROR_NOT_SUPPORTED;
    if (!strncmp(n->string, "error:", 6)) return error_code(n->string + 6);
    if (strlen(n->string) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(out, n->string);
    return NVML_SUCCESS;
}

static char *slurp(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    size_t got = fread(text, 1, (size_t)size, file);
    text[got] = 0;
    fclose(file);
    return text;
}

/* ------------------------------------------------------------------ NVML's functions */

int nvmlInit_v2(void) {
    const char *path = getenv("NVML_STANDIN_SCENARIO");
    if (!path) return 9; /* NVML_ERROR_DRIVER_NOT_LOADED: no scenario, no "driver" */
    char *text = slurp(path);
    if (!text) return 9;
    cursor c = {text, 1};
    node *parsed = parse_value(&c);
    free(text);
    if (!c.ok || parsed->kind != J_OBJECT) {
        fprintf(stderr, "nvml stand-in: %s is not a JSON object\n", path);
        return NVML_ERROR_UNKNOWN;
    }
    node *init = child(parsed, "init");
    if (init && init->kind == J_STRING) return error_code(init->string);
    scenario = parsed;
    initialized = 1;
    clock_gettime(CLOCK_MONOTONIC, &started);
    for (int i = 0; i < 64; i++) devices[i].index = i;
    return NVML_SUCCESS;
}

int nvmlInit(void) { return nvmlInit_v2(); }
int nvmlInitWithFlags(unsigned int flags) { (void)flags; return nvmlInit_v2(); }

int nvmlShutdown(void) {
    initialized = 0;
    return NVML_SUCCESS;
}

const char *nvmlErrorString(int result) {
    static char text[64];
    for (size_t i = 0; i < sizeof(ERRORS) / sizeof(ERRORS[0]); i++)
        if (ERRORS[i].code == result) { snprintf(text, sizeof text, "%s (stand-in)", ERRORS[i].name); return text; }
    return result == 0 ? "success" : "unknown error (stand-in)";
}

int nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    node *n = child(scenario, "driver");
    if (!n || n->kind != J_STRING) return NVML_ERROR_NOT_SUPPORTED;
    if (strlen(n->string) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(version, n->string);
    return NVML_SUCCESS;
}

int nvmlDeviceGetCount_v2(unsigned int *count) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    *count = gpus() ? (unsigned int)gpus()->count : 0;
    return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **handle) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    if (!gpus() || (int)index >= gpus()->count || index >= 64) return NVML_ERROR_INVALID_ARGUMENT;
    node *gpu = gpus()->items[index];
    node *lost = child(gpu, "handle");
    if (lost && lost->kind == J_STRING) return error_code(lost->string);
    *handle = &devices[index];
    return NVML_SUCCESS;
}

int nvmlDeviceGetName(void *d, char *out, unsigned int n) { return read_text(d, "name", out, n); }
int nvmlDeviceGetUUID(void *d, char *out, unsigned int n) { return read_text(d, "uuid", out, n); }
int nvmlDeviceGetVbiosVersion(void *d, char *out, unsigned int n) { return read_text(d, "vbios", out, n); }

typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} pci_info;

int nvmlDeviceGetPciInfo_v3(void *d, pci_info *info) {
    memset(info, 0, sizeof *info);
    int rc = read_text(d, "bus_id", info->busId, sizeof info->busId);
    double product = 0; /* "pci_device_id": the product's 16-bit device id, vendor 0x10DE added */
    if (rc == NVML_SUCCESS && read_path(gpu_of(d), "pci_device_id", &product) == NVML_SUCCESS)
        info->pciDeviceId = ((unsigned int)product << 16) | 0x10DEu;
    return rc;
}

int nvmlDeviceGetBrand(void *d, int *out) { return read_uint(d, "brand", (unsigned int *)out); }
int nvmlDeviceGetArchitecture(void *d, unsigned int *out) { return read_uint(d, "architecture", out); }
int nvmlDeviceGetPersistenceMode(void *d, int *out) { return read_uint(d, "persistence", (unsigned int *)out); }

int nvmlDeviceValidateInforom(void *d) {
    node *n = child(gpu_of(d), "inforom");
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    if (!n) return NVML_ERROR_NOT_SUPPORTED;
    if (n->kind == J_STRING) return !strcasecmp(n->string, "ok") ? NVML_SUCCESS : error_code(n->string);
    return NVML_SUCCESS;
}

int nvmlDeviceGetEccMode(void *d, int *current, int *pending) {
    int rc = read_uint(d, "ecc.mode", (unsigned int *)current);
    if (rc == NVML_SUCCESS && pending) *pending = *current;
    return rc;
}

int nvmlDeviceGetTotalEccErrors(void *d, int error_type, int counter_type, ull *count) {
    char path[64];
    snprintf(path, sizeof path, "ecc.%s.%s", counter_type == 0 ? "volatile" : "aggregate",
             error_type == 0 ? "corrected" : "uncorrected");
    return read_ull(d, path, count);
}

int nvmlDeviceGetRemappedRows(void *d, unsigned int *corrected, unsigned int *uncorrected,
                              unsigned int *pending, unsigned int *failed) {
    int rc = read_uint(d, "remapped_rows.corrected", corrected);
    if (rc == NVML_SUCCESS) rc = read_uint(d, "remapped_rows.uncorrected", uncorrected);
    if (rc == NVML_SUCCESS) rc = read_uint(d, "remapped_rows.pending", pending);
    if (rc == NVML_SUCCESS) rc = read_uint(d, "remapped_rows.failure", failed);
    return rc;
}

int nvmlDeviceGetRetiredPages(void *d, int cause, unsigned int *count, ull *addresses) {
    unsigned int have = 0;
    int rc = read_uint(d, cause == 0 ? "retired_pages.sbe" : "retired_pages.dbe", &have);
    if (rc != NVML_SUCCESS) return rc;
    unsigned int room = *count;
    *count = have;
    if (room == 0) return NVML_SUCCESS;
    if (room < have) return NVML_ERROR_INSUFFICIENT_SIZE;
    for (unsigned int i = 0; addresses && i < have; i++) addresses[i] = 0x1000ULL * (i + 1);
    return NVML_SUCCESS;
}

int nvmlDeviceGetRetiredPagesPendingStatus(void *d, int *pending) {
    return read_uint(d, "retired_pages.pending", (unsigned int *)pending);
}

int nvmlDeviceGetCurrentClocksEventReasons(void *d, ull *reasons) { return read_ull(d, "clocks_event_reasons", reasons); }
int nvmlDeviceGetCurrentClocksThrottleReasons(void *d, ull *reasons) { return read_ull(d, "clocks_event_reasons", reasons); }
int nvmlDeviceGetCurrPcieLinkGeneration(void *d, unsigned int *v) { return read_uint(d, "pcie.gen", v); }
int nvmlDeviceGetCurrPcieLinkWidth(void *d, unsigned int *v) { return read_uint(d, "pcie.width", v); }
int nvmlDeviceGetMaxPcieLinkGeneration(void *d, unsigned int *v) { return read_uint(d, "pcie.max_gen", v); }
int nvmlDeviceGetMaxPcieLinkWidth(void *d, unsigned int *v) { return read_uint(d, "pcie.max_width", v); }
int nvmlDeviceGetPcieReplayCounter(void *d, unsigned int *v) { return read_uint(d, "pcie.replays", v); }

int nvmlDeviceGetNvLinkState(void *d, unsigned int link, int *active) {
    char path[64];
    snprintf(path, sizeof path, "nvlink.%u.state", link);
    return read_uint(d, path, (unsigned int *)active);
}

int nvmlDeviceGetNvLinkVersion(void *d, unsigned int link, unsigned int *version) {
    char path[64];
    snprintf(path, sizeof path, "nvlink.%u.version", link);
    return read_uint(d, path, version);
}

int nvmlDeviceGetNvLinkErrorCounter(void *d, unsigned int link, int counter, ull *value) {
    static const char *names[] = {"replay", "recovery", "crc_flit", "crc_data", "ecc_data"};
    if (counter < 0 || counter > 4) return NVML_ERROR_INVALID_ARGUMENT;
    char path[64];
    snprintf(path, sizeof path, "nvlink.%u.%s", link, names[counter]);
    return read_ull(d, path, value);
}

typedef struct {
    unsigned char clusterUuid[16];
    int status;
    unsigned int cliqueId;
    unsigned char state;
} fabric_info;

int nvmlDeviceGetGpuFabricInfo(void *d, fabric_info *info) {
    unsigned int state = 0, status = 0;
    int rc = read_uint(d, "fabric.state", &state);
    if (rc == NVML_SUCCESS) rc = read_uint(d, "fabric.status", &status);
    if (rc != NVML_SUCCESS) return rc;
    memset(info, 0, sizeof *info);
    info->state = (unsigned char)state;
    info->status = (int)status;
    return NVML_SUCCESS;
}

typedef struct {
    unsigned int pid;
    ull usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} process_info;

int nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned int *count, process_info *infos) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    node *list = child(gpu_of(d), "processes");
    if (list && list->kind == J_STRING) return error_code(list->string);
    unsigned int have = list && list->kind == J_ARRAY ? (unsigned int)list->count : 0;
    unsigned int room = *count;
    *count = have;
    if (room < have) return NVML_ERROR_INSUFFICIENT_SIZE;
    for (unsigned int i = 0; i < have; i++) {
        double pid = 0, used = 0;
        read_path(list->items[i], "pid", &pid);
        read_path(list->items[i], "used_bytes", &used);
        infos[i].pid = (unsigned int)pid;
        infos[i].usedGpuMemory = (ull)used;
        infos[i].gpuInstanceId = infos[i].computeInstanceId = 0xFFFFFFFF;
    }
    return NVML_SUCCESS;
}

int nvmlDeviceGetComputeRunningProcesses_v2(void *d, unsigned int *count, process_info *infos) {
    return nvmlDeviceGetComputeRunningProcesses_v3(d, count, infos);
}

int nvmlDeviceGetTemperature(void *d, int sensor, unsigned int *v) {
    (void)sensor;
    return read_uint(d, "temperature", v);
}

int nvmlDeviceGetTemperatureThreshold(void *d, int kind, unsigned int *v) {
    static const char *names[] = {"shutdown_temp", "slowdown_temp", "mem_max_temp", "gpu_max_temp"};
    if (kind < 0 || kind > 3) return NVML_ERROR_NOT_SUPPORTED;
    return read_uint(d, names[kind], v);
}

int nvmlDeviceGetPowerUsage(void *d, unsigned int *mw) { return read_uint(d, "power_mw", mw); }
int nvmlDeviceGetEnforcedPowerLimit(void *d, unsigned int *mw) { return read_uint(d, "power_limit_mw", mw); }

int nvmlDeviceGetClockInfo(void *d, int type, unsigned int *mhz) {
    return type == 1 ? read_uint(d, "sm_clock", mhz) : NVML_ERROR_NOT_SUPPORTED;
}

int nvmlDeviceGetMaxClockInfo(void *d, int type, unsigned int *mhz) {
    return type == 1 ? read_uint(d, "max_sm_clock", mhz) : NVML_ERROR_NOT_SUPPORTED;
}

typedef struct { unsigned int gpu, memory; } utilization;

int nvmlDeviceGetUtilizationRates(void *d, utilization *u) {
    int rc = read_uint(d, "utilization.gpu", &u->gpu);
    if (rc == NVML_SUCCESS) rc = read_uint(d, "utilization.memory", &u->memory);
    return rc;
}

typedef struct { ull total, free, used; } memory_info;

int nvmlDeviceGetMemoryInfo(void *d, memory_info *m) {
    ull total = 0, used = 0;
    int rc = read_ull(d, "memory.total", &total);
    if (rc == NVML_SUCCESS) rc = read_ull(d, "memory.used", &used);
    if (rc != NVML_SUCCESS) return rc;
    m->total = total;
    m->used = used;
    m->free = total > used ? total - used : 0;
    return NVML_SUCCESS;
}

int nvmlDeviceGetMigMode(void *d, unsigned int *current, unsigned int *pending) {
    int rc = read_uint(d, "mig", current);
    if (rc == NVML_SUCCESS && pending) *pending = *current;
    return rc;
}


/* ------------------------------------------------------------------ newer NVML calls */

/* nvmlFieldValue_t: fieldId, scopeId, timestamp, latencyUsec, valueType, nvmlReturn, value. */
typedef struct {
    unsigned int fieldId, scopeId;
    long long timestamp, latencyUsec;
    int valueType, nvmlReturn;
    union { double d; unsigned int ui; unsigned long long ull; long long sll; int si; } value;
} field_value;

/* A field answers from "nvlink.<scopeId>.fields.<id>" where that link has it (NVLink counters
 * are per link), else from "fields.<id>". Like NVML, the call succeeds and each entry carries
 * its own return code. */
int nvmlDeviceGetFieldValues(void *d, int count, field_value *values) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    if (!gpu_of(d) || count < 0 || !values) return NVML_ERROR_INVALID_ARGUMENT;
    if (lost(d)) return 15;
    for (int i = 0; i < count; i++) {
        char path[96];
        double value = 0;
        snprintf(path, sizeof path, "nvlink.%u.fields.%u", values[i].scopeId, values[i].fieldId);
        int rc = values[i].scopeId < 64 ? read_path(gpu_of(d), path, &value) : NVML_ERROR_NOT_SUPPORTED;
        if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT) {
            snprintf(path, sizeof path, "fields.%u", values[i].fieldId);
            rc = read_path(gpu_of(d), path, &value);
        }
        values[i].nvmlReturn = rc;
        values[i].valueType = 3; /* unsigned long long */
        values[i].value.ull = rc == NVML_SUCCESS ? (ull)value : 0;
    }
    return NVML_SUCCESS;
}

/* DCGM's layout of nvmlUnrepairableMemoryStatus_v1_t: a version word, then the flag. */
int nvmlDeviceGetUnrepairableMemoryFlag_v1(void *d, unsigned int *status) {
    if (!status) return NVML_ERROR_INVALID_ARGUMENT;
    if (status[0] != 0x01000008u) return 25; /* NVML_ERROR_ARGUMENT_VERSION_MISMATCH */
    return read_uint(d, "unrepairable_memory", &status[1]);
}

/* nvmlEccSramErrorStatus_v1_t: version at 0, counters, bThresholdExceeded at byte 96. */
int nvmlDeviceGetSramEccErrorStatus(void *d, unsigned char *status) {
    unsigned int version, exceeded = 0;
    if (!status) return NVML_ERROR_INVALID_ARGUMENT;
    memcpy(&version, status, 4);
    if (version != 0x01000068u) return 25;
    int rc = read_uint(d, "sram_threshold_exceeded", &exceeded);
    if (rc == NVML_SUCCESS) memcpy(status + 96, &exceeded, 4);
    return rc;
}

/* nvmlGpuFabricInfo_v2_t / _v3_t: version, clusterUuid[16], status, cliqueId, state (one byte,
 * padded), healthMask; v3 adds healthSummary. "fabric.health_mask" missing answers 0 (every
 * health field NOT_SUPPORTED), as an older fabric manager does. */
int nvmlDeviceGetGpuFabricInfoV(void *d, unsigned char *info) {
    unsigned int version, state = 0, status = 0, mask = 0, summary = 0;
    if (!info) return NVML_ERROR_INVALID_ARGUMENT;
    memcpy(&version, info, 4);
    if (version != 0x03000028u && version != 0x02000024u) return 25;
    int rc = read_uint(d, "fabric.state", &state);
    if (rc == NVML_SUCCESS) rc = read_uint(d, "fabric.status", &status);
    if (rc != NVML_SUCCESS) return rc;
    int masked = read_uint(d, "fabric.health_mask", &mask);
    if (masked != NVML_SUCCESS && masked != NVML_ERROR_NOT_SUPPORTED) return masked;
    read_uint(d, "fabric.health_summary", &summary);
    memset(info + 4, 0, version == 0x03000028u ? 36 : 32);
    memcpy(info + 20, &status, 4);
    info[28] = (unsigned char)state;
    memcpy(info + 32, &mask, 4);
    if (version == 0x03000028u) info[36] = (unsigned char)summary;
    return NVML_SUCCESS;
}

int nvmlDeviceGetPerformanceState(void *d, unsigned int *pstate) { return read_uint(d, "pstate", pstate); }

/* ------------------------------------------------------------------ XID events */

typedef struct {
    void *device;
    ull eventType, eventData;
    unsigned int gpuInstanceId, computeInstanceId;
} event_data;

typedef struct {
    struct timespec created;
    int registered[64];
    int delivered[64]; /* per GPU: how many of its xid_events were delivered */
} event_set;

static double ms_since(struct timespec *start) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1e3 + (now.tv_nsec - start->tv_nsec) / 1e6;
}

int nvmlEventSetCreate(event_set **set) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    *set = calloc(1, sizeof(event_set));
    clock_gettime(CLOCK_MONOTONIC, &(*set)->created);
    return NVML_SUCCESS;
}

int nvmlDeviceRegisterEvents(void *d, ull types, event_set *set) {
    node *gpu = gpu_of(d);
    if (!gpu || !set) return NVML_ERROR_INVALID_ARGUMENT;
    node *events = child(gpu, "xid_events");
    if (events && events->kind == J_STRING) return error_code(events->string);
    if (!(types & 0x8ULL)) return NVML_ERROR_NOT_SUPPORTED;
    set->registered[((device *)d)->index] = 1;
    return NVML_SUCCESS;
}

/* The earliest undelivered event due by `horizon` ms, or -1. */
static int next_event(event_set *set, double horizon, int *gpu_out, double *due_out, int *xid_out) {
    int found = -1;
    double best = 1e18;
    for (int g = 0; gpus() && g < gpus()->count && g < 64; g++) {
        node *events = child(gpus()->items[g], "xid_events");
        if (!set->registered[g] || !events || events->kind != J_ARRAY) continue;
        int k = set->delivered[g];
        if (k >= events->count) continue;
        double due = 0, xid = 0;
        read_path(events->items[k], "after_ms", &due);
        read_path(events->items[k], "xid", &xid);
        if (due <= horizon && due < best) {
            best = due, found = g, *due_out = due, *xid_out = (int)xid;
        }
    }
    *gpu_out = found;
    return found;
}

int nvmlEventSetWait_v2(event_set *set, event_data *data, unsigned int timeout_ms) {
    if (!initialized) return NVML_ERROR_UNINITIALIZED;
    double now = ms_since(&set->created), due = 0;
    int gpu = -1, xid = 0;
    next_event(set, now + timeout_ms, &gpu, &due, &xid);
    if (gpu < 0) {
        usleep(timeout_ms * 1000U);
        return NVML_ERROR_TIMEOUT;
    }
    if (due > now) usleep((useconds_t)((due - now) * 1000));
    set->delivered[gpu]++;
    memset(data, 0, sizeof *data);
    data->device = &devices[gpu];
    data->eventType = 0x8ULL;
    data->eventData = (ull)xid;
    data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFF;
    return NVML_SUCCESS;
}

int nvmlEventSetWait(event_set *set, event_data *data, unsigned int timeout_ms) {
    return nvmlEventSetWait_v2(set, data, timeout_ms);
}

int nvmlEventSetFree(event_set *set) {
    free(set);
    return NVML_SUCCESS;
}
