// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Large answers on demand, for cache and stream tests: `blob` returns `size` pseudo-random bytes for a
/// seed (an eth_call answer of any size), `emitBlob` logs them (a receipt of any size).
contract Blob {
    event Data(uint256 indexed seed, bytes data);

    function blob(uint256 seed, uint256 size) public pure returns (bytes memory out) {
        out = new bytes(size);
        for (uint256 i = 0; i < size; i += 32) {
            bytes32 word = keccak256(abi.encode(seed, i));
            assembly {
                mstore(add(add(out, 32), i), word)
            }
        }
    }

    function emitBlob(uint256 seed, uint256 size) external {
        emit Data(seed, blob(seed, size));
    }
}
