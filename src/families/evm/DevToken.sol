// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// The dev chain's token (devToken.ts holds its compiled creation code): its whole supply minted to the
/// deployer, then plain transfers. Only what a token index, balances and metadata read.
contract DevToken {
    string public constant name = "Dev Token";
    string public constant symbol = "DEV";
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;

    event Transfer(address indexed from, address indexed to, uint256 value);

    constructor(uint256 supply) {
        totalSupply = supply;
        balanceOf[msg.sender] = supply;
        emit Transfer(address(0), msg.sender, supply);
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        require(balanceOf[msg.sender] >= amount, "balance");
        unchecked {
            balanceOf[msg.sender] -= amount;
        }
        balanceOf[to] += amount;
        emit Transfer(msg.sender, to, amount);
        return true;
    }
}
