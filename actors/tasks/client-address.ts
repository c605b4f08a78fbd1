/**
 * The task quotas' address key is the one every listener counts clients by (lib/client-address.ts);
 * re-exported here for the imports that name this module (the root entry's `clientAddressKey`).
 */
export { clientAddressKey } from '../../lib/client-address.ts'
