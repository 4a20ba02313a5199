// nicsim's JNI binding: opens Verilated block libraries and runs batches of cycles in them
#include <jni.h>
#include <dlfcn.h>
#include <stdint.h>

struct Handle {
  void* (*make)();
  void (*free_)(void*);
  void (*run)(void*, const int64_t*, int32_t, int64_t*);
  void (*coverage)(void*, const char*); // only in a coverage build
  void* instance;
};

static void fail(JNIEnv* env, const char* what) {
  env->ThrowNew(env->FindClass("java/lang/IllegalStateException"), what);
}

extern "C" JNIEXPORT jlong JNICALL Java_nicsim_hw_rtl_NativeRtl_open0(JNIEnv* env, jclass, jstring path) {
  const char* p = env->GetStringUTFChars(path, 0);
  void* so = dlopen(p, RTLD_NOW | RTLD_LOCAL);
  env->ReleaseStringUTFChars(path, p);
  if (!so) { fail(env, dlerror()); return 0; }
  Handle* h = new Handle();
  h->make = (void* (*)()) dlsym(so, "nicsim_make");
  h->free_ = (void (*)(void*)) dlsym(so, "nicsim_free");
  h->run = (void (*)(void*, const int64_t*, int32_t, int64_t*)) dlsym(so, "nicsim_run");
  h->coverage = (void (*)(void*, const char*)) dlsym(so, "nicsim_coverage");
  if (!h->make || !h->free_ || !h->run) {
    delete h;
    fail(env, "not a nicsim RTL library (nicsim_make/free/run missing)");
    return 0;
  }
  h->instance = h->make();
  return (jlong) h;
}

extern "C" JNIEXPORT void JNICALL Java_nicsim_hw_rtl_NativeRtl_run0(JNIEnv* env, jclass, jlong handle,
                                                                    jlongArray records, jint count, jlongArray out) {
  Handle* h = (Handle*) handle;
  jlong* r = (jlong*) env->GetPrimitiveArrayCritical(records, 0);
  jlong* o = (jlong*) env->GetPrimitiveArrayCritical(out, 0);
  h->run(h->instance, (const int64_t*) r, count, (int64_t*) o);
  env->ReleasePrimitiveArrayCritical(out, o, 0);
  env->ReleasePrimitiveArrayCritical(records, r, JNI_ABORT);
}

extern "C" JNIEXPORT void JNICALL Java_nicsim_hw_rtl_NativeRtl_close0(JNIEnv*, jclass, jlong handle) {
  Handle* h = (Handle*) handle;
  h->free_(h->instance);
  delete h;
}

extern "C" JNIEXPORT void JNICALL Java_nicsim_hw_rtl_NativeRtl_coverage0(JNIEnv* env, jclass, jlong handle,
                                                                         jstring path) {
  Handle* h = (Handle*) handle;
  if (!h->coverage) { fail(env, "this RTL library was not built with coverage"); return; }
  const char* p = env->GetStringUTFChars(path, 0);
  h->coverage(h->instance, p);
  env->ReleaseStringUTFChars(path, p);
}
