// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

interface IERC20 {
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// Moves value and tokens on behalf of callers: internal native transfers and contract-initiated token
/// transfers, for tests. `fail` always reverts.
contract Forwarder {
    event Forwarded(address indexed to, uint256 value);

    function forward(address payable to) external payable {
        (bool ok, ) = to.call{value: msg.value}("");
        require(ok, "forward failed");
        emit Forwarded(to, msg.value);
    }

    /// Splits the value sent between two recipients: two internal transfers in one transaction.
    function split(address payable a, address payable b) external payable {
        uint256 half = msg.value / 2;
        (bool okA, ) = a.call{value: half}("");
        (bool okB, ) = b.call{value: msg.value - half}("");
        require(okA && okB, "split failed");
    }

    function pull(address token, address from, address to, uint256 amount) external {
        require(IERC20(token).transferFrom(from, to, amount), "pull failed");
    }

    function fail() external payable {
        revert("always fails");
    }
}
