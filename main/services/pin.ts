/** Sign-in PIN hashing for the session handlers; implemented in main/security/pin.ts (shared with the seed). */
export { PIN_SCRYPT_N, hashPin, verifyPin } from '../security/pin';
