// The pages' one way to show text a reviewer must read as it is; it lives in the contract, shared with notifications.
export { revealed } from '../contract/index.js'
