/** The rule registry: one entry per folder under rules/ (a meta test keeps the two in step). */
import type { AnyRule } from '../src/rule.js';
import archUnsupported from './arch-unsupported/rule.js';
import companionMismatch from './companion-mismatch/rule.js';
import cpuWheel from './cpu-wheel/rule.js';
import cudaMismatch from './cuda-mismatch/rule.js';
import cudaNotAllowed from './cuda-not-allowed/rule.js';
import driverFloor from './driver-floor/rule.js';
import exactPin from './exact-pin/rule.js';
import gpuArch from './gpu-arch/rule.js';
import imageMissing from './image-missing/rule.js';
import imagePin from './image-pin/rule.js';
import imageUnknown from './image-unknown/rule.js';
import indexUrl from './index-url/rule.js';
import invalidSuppression from './invalid-suppression/rule.js';
import missingInclude from './missing-include/rule.js';
import packageNotAllowed from './package-not-allowed/rule.js';
import parseError from './parse-error/rule.js';
import policyError from './policy-error/rule.js';
import prerelease from './prerelease/rule.js';
import wheelMissing from './wheel-missing/rule.js';

export const RULES: readonly AnyRule[] = [
  cudaMismatch,
  driverFloor,
  wheelMissing,
  companionMismatch,
  gpuArch,
  archUnsupported,
  imageMissing,
  imageUnknown,
  missingInclude,
  cpuWheel,
  indexUrl,
  exactPin,
  imagePin,
  cudaNotAllowed,
  packageNotAllowed,
  prerelease,
  parseError,
  policyError,
  invalidSuppression,
];

export { RULE_DEFAULTS, RULE_IDS } from './ids.js';
