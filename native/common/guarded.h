// Shared by the OpenCV-linked addons (native/opencv, native/capture): one way for a C++ exception
// to become a JavaScript Error instead of escaping to std::terminate, which would abort the whole
// process (in Electron, the main process). The error carries `code` (e.g. "ERR_OPENCV"), and for
// an OpenCV assertion also `cvCode` and `cvFunction`; main/capture/native/index.ts turns these into
// the typed OpenCvError.
#pragma once

#include <napi.h>

#include <exception>
#include <opencv2/core.hpp>
#include <string>
#include <utility>

namespace ai_native {

/** A JavaScript Error with `code`, `cvCode` (0 when not from OpenCV) and `cvFunction` ("" likewise). */
inline Napi::Error codedError(Napi::Env env, const std::string& message, const char* code, int cvCode = 0, const std::string& func = "") {
  auto e = Napi::Error::New(env, message);
  e.Set("code", Napi::String::New(env, code));
  e.Set("cvCode", Napi::Number::New(env, cvCode));
  e.Set("cvFunction", Napi::String::New(env, func));
  return e;
}

/**
 * Runs `body`; a Napi::Error passes through, a cv::Exception becomes "OpenCV <func>: <err>" and any
 * other C++ exception "<addon>: <what>", both with code "ERR_OPENCV".
 */
template <typename F>
auto Guarded(Napi::Env env, const char* addon, F&& body) -> decltype(body()) {
  try {
    return std::forward<F>(body)();
  } catch (const Napi::Error&) {
    throw;
  } catch (const cv::Exception& e) {
    throw codedError(env, "OpenCV " + e.func + ": " + e.err, "ERR_OPENCV", e.code, e.func);
  } catch (const std::exception& e) {
    throw codedError(env, std::string(addon) + ": " + e.what(), "ERR_OPENCV");
  } catch (...) {
    throw codedError(env, std::string(addon) + ": unknown native exception", "ERR_OPENCV");
  }
}

}  // namespace ai_native
