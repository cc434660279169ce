// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// An old-style token whose name and symbol are bytes32 (as MKR and SAI have), for tests.
contract Bytes32Token {
    bytes32 public name = "Old Token";
    bytes32 public symbol = "OLD";
    uint8 public decimals = 9;
    mapping(address => uint256) public balanceOf;

    event Transfer(address indexed from, address indexed to, uint256 value);

    function mint(address to, uint256 amount) external {
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }
}
